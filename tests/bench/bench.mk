# tests/bench/bench.mk — `make bench`: performance tables (included by the Makefile).
#
# `bench` runs every bench-* target listed as its prerequisite; each builds what it needs and
# prints its own table. BENCH_ARGS=--quick makes bench-gemm fast. To add a lab (one line per run,
# wall time and peak RSS from tests/bench/run_lab.sh, plus the throughput the lab prints):
#
#   bench: bench-lab06
#   .PHONY: bench-lab06
#   bench-lab06: lab06
#   	@bash tests/bench/run_lab.sh --header
#   	@bash tests/bench/run_lab.sh --unit tokens/sec "lab06 classic" -- ./lab06 --out $(BENCH_DIR)/lab06
#
# bench-gemm: GFLOP/s of the built-in kernel, the gemm() dispatcher and OpenBLAS (when the build
# found it) on square sizes and on the products the labs run, next to the machine's peak.

BENCH_DIR := $(B)/bench
BENCH_ARGS ?=
# The lab binaries a bench runs: ./labNN for this CPU's build, $(B)/bin/labNN with ISA=avx2|avx512
# (make bench ISA=avx2 beside make bench: what a student's AVX2 laptop gets, on this machine).
LAB_BIN := $(if $(ISA),$(B)/bin,.)
# OpenBLAS picks its kernels by the CPU it runs on, not by -march: on an AVX-512 machine an AVX2
# build would still get OpenBLAS's AVX-512 kernels for the large products. Pin them to the AVX2
# ("Haswell") ones, as an AVX2 laptop would run.
ifeq ($(ISA),avx2)
export OPENBLAS_CORETYPE := Haswell
endif

.PHONY: bench bench-gemm
bench: bench-gemm

$(BENCH_DIR)/bench_gemm: tests/bench/bench_gemm.c $(LIBCOMMON) $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(LIBCOMMON) $(LDLIBS)

bench-gemm: $(BENCH_DIR)/bench_gemm
	@$(BENCH_DIR)/bench_gemm $(BENCH_ARGS)

# lab07 (the Vision Transformer): the CPU preset for 2 epochs (test accuracy after each is in the
# lab's output) and 20 steps of the book's 96x96 preset. Targets: >= 6,500 and >= 85 images/sec.
bench: bench-lab07
.PHONY: bench-lab07
bench-lab07: $(LAB_BIN)/lab07 $(BENCH_DIR)/bench_gemm
	@bash tests/bench/run_lab.sh --header
	@bash tests/bench/run_lab.sh --unit images/sec "lab07 cpu preset, 2 epochs" -- $(LAB_BIN)/lab07 --epochs 2 --out $(BENCH_DIR)/lab07
	@RUN_LAB_LOG=$(BENCH_DIR)/lab07_d2l.log bash tests/bench/run_lab.sh --unit images/sec "lab07 d2l preset, 20 steps" -- $(LAB_BIN)/lab07 --preset d2l --steps 20 --out $(BENCH_DIR)/lab07_d2l
	@printf '%-34s %s; %s\n' "" "$$(sed -n 's/^matrix products: .* \([0-9.]*\) GFLOP\/s$$/matrix products \1 GFLOP\/s/p' $(BENCH_DIR)/lab07_d2l.log)" "$$($(BENCH_DIR)/bench_gemm --peak)"
# PyTorch's side of the large presets (the book's models at the same sizes, Debian's PyTorch,
# two threads): `make bench-torch`. Not part of `make bench` (PyTorch is not a dependency).
.PHONY: bench-torch
bench-torch:
	@for w in lab03-d2l10 lab06-d2l10 lab07-d2l; do OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 tests/bench/torch_step_time.py $$w 10 || exit 1; done

# The kit against PyTorch in one sitting, workload by workload (issues 14 and 17's ratio tables):
# `make bench-vs-torch [ISA=avx2]`. Not part of `make bench` (PyTorch is not a dependency).
.PHONY: bench-vs-torch
bench-vs-torch: $(LAB_BIN)/lab03 $(LAB_BIN)/lab06 $(LAB_BIN)/lab07 $(BENCH_DIR)/bench_gemm
	@ISA=$(ISA) bash tests/bench/vs_torch.sh $(LAB_BIN) $(BENCH_DIR)/bench_gemm

# lab03 (Bahdanau attention): the classic preset for LAB03_SEEDS (tokens/sec, peak RSS, final
# loss, mean BLEU of the four sentences, held-out BLEU-2) and two epochs of --preset d2l-1.0
# (s/epoch), next to the PyTorch reference of issue 4. Targets: >= 55,000 tokens/sec, loss
# <= 0.03, mean BLEU >= 0.85 over seeds, peak RSS < 64 MB.
LAB03_SEEDS ?= 1 2 3
bench: bench-lab03
.PHONY: bench-lab03
bench-lab03: $(LAB_BIN)/lab03 $(BENCH_DIR)/bench_gemm
	@LAB_BIN=$(LAB_BIN) BENCH_GEMM=$(BENCH_DIR)/bench_gemm bash tests/bench/bench_seq2seq.sh lab03 $(BENCH_DIR)/lab03 $(LAB03_SEEDS)

# lab06 (the Transformer): the classic preset for LAB06_SEEDS and two epochs of --preset d2l-1.0
# (s/epoch), next to the PyTorch reference of issue 5. Targets: >= 35,000 tokens/sec, loss <= 0.05,
# mean BLEU >= 0.9 over seeds, peak RSS < 64 MB.
LAB06_SEEDS ?= 1 2 3
bench: bench-lab06
.PHONY: bench-lab06
bench-lab06: $(LAB_BIN)/lab06 $(BENCH_DIR)/bench_gemm
	@LAB_BIN=$(LAB_BIN) BENCH_GEMM=$(BENCH_DIR)/bench_gemm bash tests/bench/bench_seq2seq.sh lab06 $(BENCH_DIR)/lab06 $(LAB06_SEEDS)
