.PHONY: docs
docs:
