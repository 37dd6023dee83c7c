.PHONY: bench
bench:
