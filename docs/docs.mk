# make docs — weave every chapter (chapters/NN_*/labNN.c) into docs/labNN.md, with the lab's
# printed output after the code that printed it and its figures where they are drawn, and into
# docs/labNN.html where pandoc is installed. docs/README.md explains the output; docs/weave.c
# the weaver; docs/weave.sh one lab's run. Included by the Makefile (uses its CC, CFLAGS,
# LINK_LIBS, LABS, LAB_MAINS, B).
#
#   make docs                          every lab in this checkout
#   make docs DOCS_LABS="lab01 lab02"  some of them
#   make docs DOCS_RUN=reuse           weave again from the last docs run's output (no rerun)
#   make docs DOCS_RUN=no              prose and code only, no run
#   make docs DOCS_ARGS_lab03="--epochs 50"   flags for one lab's docs run
#   DOCS_RUN_labNN=yes|reuse|no        the same choice for one lab

DOCS_LABS ?= $(LABS)
DOCS_RUN ?= yes
DOCS_TIMEOUT ?= 900
DOCS_DIR ?= docs
# where the run's output and figures go, under DOCS_DIR (the handout's reference run: ref)
DOCS_OUT ?= out
# where @code directives read labs/... and solutions/... files: this build's exercises (a
# handout's reference pages are run with the solutions but show the stubs: DOCS_EXERCISES=labs)
DOCS_EXERCISES ?= $(VARIANT)
# Labs 03 and 06 train their full classic presets in seconds, so their pages show the book's
# settings. lab07's default (10 epochs, about a minute on 2 cores) is cut to 2 epochs, which
# already reach the issue's accuracy check; run with DOCS_ARGS_lab07= for the full page.
DOCS_ARGS_lab03 ?=
DOCS_ARGS_lab06 ?=
DOCS_ARGS_lab07 ?= --epochs 2
# What the prose claims about its run ([TEXT]{.run}, docs/weave.c) must be what the run printed:
# an error on the kit's own pages (the solutions), a note in the page on a student's own run.
DOCS_CLAIMS ?= $(if $(filter solutions,$(VARIANT)),check,note)
HAVE_PANDOC := $(shell command -v pandoc >/dev/null 2>&1 && echo yes)

WEAVE_DIR := $(B)/weave
WEAVE := $(WEAVE_DIR)/weave

$(WEAVE): docs/weave.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -g -o $@ $<

.PHONY: docs docs-tool $(addprefix docs-,$(LABS))
docs-tool: $(WEAVE)
docs: $(addprefix docs-,$(DOCS_LABS))
	@$(if $(HAVE_PANDOC),bash docs/site.sh index $(DOCS_DIR),echo "docs: pandoc not found: wrote Markdown only (apt-get install pandoc; make deps-dev installs it)")
	@echo "docs: $(addprefix $(DOCS_DIR)/,$(addsuffix .md,$(DOCS_LABS)))$(if $(HAVE_PANDOC), (open $(DOCS_DIR)/index.html))"

# One lab: the marked chapter (weave mark) is compiled and linked like the lab itself (with the
# CUDA objects, or cuda/nocuda.c: common/cli.c calls cuda_open); when that fails the
# plain ./labNN runs instead and its output goes into one closing section.
define DOC_RULE
docs-$(1): $(WEAVE) $(1) $$(LIBS_ALL) $$(LAB_CUDA_OBJ)
	@mkdir -p $(WEAVE_DIR)
	@src=$$(filter %/$(1).c,$$(LAB_MAINS)); mode=$$(or $$(DOCS_RUN_$(1)),$$(DOCS_RUN)); bin=./$(1); \
	if [ "$$$$mode" = yes ]; then \
	  $(WEAVE) mark $$$$src > $(WEAVE_DIR)/$(1).c && \
	  if $$(CC) $$(CFLAGS) -Ilabs -iquote $$$$(dirname $$$$src) -o $(WEAVE_DIR)/$(1) \
	       $(WEAVE_DIR)/$(1).c $$(LAB_CUDA_OBJ) $$(LINK_LIBS) $$(LAB_CUDA_LIBS) \
	       > $(WEAVE_DIR)/$(1).build.log 2>&1; then \
	    bin=$(WEAVE_DIR)/$(1); \
	  else \
	    echo "docs: $(1): the marked chapter did not compile ($(WEAVE_DIR)/$(1).build.log);" \
	         "its output goes into one closing section"; \
	  fi; \
	fi; \
	WEAVE=$(WEAVE) PANDOC=$(HAVE_PANDOC) DOCS_TIMEOUT=$(DOCS_TIMEOUT) DOCS_DIR=$(DOCS_DIR) \
	  DOCS_OUT=$(DOCS_OUT) DOCS_EXERCISES=$(DOCS_EXERCISES) DOCS_CLAIMS=$(DOCS_CLAIMS) \
	  bash docs/weave.sh $(1) "$$$$src" "$$$$bin" "$$$$mode" "$$(DOCS_ARGS_$(1))"
endef
$(foreach l,$(LABS),$(eval $(call DOC_RULE,$(l))))
