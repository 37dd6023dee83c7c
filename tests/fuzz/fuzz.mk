# tests/fuzz/fuzz.mk — libFuzzer harnesses (clang -fsanitize=fuzzer,address,undefined) for the
# readers that take outside input: the zip reader, the gzip/IDX reader, the fra.txt pipeline,
# the checkpoint loader and the flag parser. `make test` runs each a few seconds
# (tests/suites/fuzz.sh); `make fuzz FUZZ_SECONDS=300` runs each longer and keeps the corpus
# under build/fuzz/corpus/. Needs clang 14 and its libFuzzer runtime (libclang-rt-14-dev).

FUZZ_CC ?= $(shell command -v clang-14 2>/dev/null || command -v clang 2>/dev/null)
FUZZ_SECONDS ?= 60
FUZZ_DIR := $(B)/fuzz
FUZZ_NAMES := $(notdir $(basename $(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_BINS := $(FUZZ_NAMES:%=$(FUZZ_DIR)/%)
# common/ once more, instrumented for coverage and the sanitizers (no OpenMP, no BLAS: plain C),
# with cuda/nocuda.c for the CUDA entry points cli.c calls (--device cuda: a CPU-only build)
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer -Wall -Wextra \
  -Wno-unused-parameter -Wno-unknown-pragmas -fsanitize=address,undefined \
  -fno-sanitize-recover=undefined
FUZZ_OBJ := $(COMMON_SRC:%.c=$(FUZZ_DIR)/obj/%.o) $(FUZZ_DIR)/obj/cuda/nocuda.o

$(FUZZ_DIR)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(FUZZ_DIR)/libcommon.a: $(FUZZ_OBJ)
	@rm -f $@ && ar rcs $@ $^

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h $(FUZZ_DIR)/libcommon.a
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_DIR)/libcommon.a -lz -lm -o $@

.PHONY: fuzz-build fuzz
fuzz-build:
	@[ -n "$(FUZZ_CC)" ] || { echo "fuzz: no clang (apt-get install clang-14 libclang-rt-14-dev; make deps-dev)"; exit 1; }
	@$(MAKE) --no-print-directory $(FUZZ_BINS)

# Each harness for FUZZ_SECONDS, from seeds made from the real data files; the corpus grows
# under build/fuzz/corpus/ from run to run. A crash leaves its input as build/fuzz/crash-*.
fuzz: fuzz-build
	@bash tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_DIR)/corpus
