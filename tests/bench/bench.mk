# tests/bench/bench.mk — `make bench`: performance tables (included by the Makefile).
#
# `bench` runs every bench-* target listed as its prerequisite. To add one:
#   bench: bench-lab06
#   bench-lab06: lab06 ; ./lab06 --preset bench ...
# Each bench target builds what it needs and prints its own table.
#
# bench-gemm: GFLOP/s of the built-in kernel, OpenBLAS (when the build found it) and the gemm()
# dispatcher on square sizes and on the products the labs run. BENCH_ARGS=--quick for a fast run.

BENCH_DIR := $(B)/bench
BENCH_ARGS ?=

.PHONY: bench bench-gemm
bench: bench-gemm

$(BENCH_DIR)/bench_gemm: tests/bench/bench_gemm.c $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(LIBCOMMON) $(LDLIBS)

bench-gemm: $(BENCH_DIR)/bench_gemm
	$(BENCH_DIR)/bench_gemm $(BENCH_ARGS)
