# grade.mk — grading rules, included by the Makefile.
#
#   make grade [LAB=NN] [VARIANT=solutions|labs]   score table, results.json; exit 0 at full marks
#   make grade-setup                               a checksummed copy of the kit's headers (below)
#   make handout                                   build/attention-lab-handout.tar.gz
#   make submission                                build/submission.zip: what a student hands in
#   make grade-all SUBS=DIR                        a course's submissions (grade_all.sh)
#   make grade-build                               the grader, its runners, its own test binaries
#
# Three kinds of binary (tests/grade/grader.c says why):
#   $(VOBJ)/grade             the grader: grader.c + sandbox.c + libcommon. No test, no student
#                             code: nothing of the submission ever runs in the process that scores.
#   $(GRADE_OUT)/grade-run    a runner: runner.c + the graded tests + the submission's exercises
#   $(GRADE_OUT)/grade-run-hidden   the same with the hidden tests (tests/hidden/), if any
#
# A submission is data (docs/instructor-guide.md, "What the grader guarantees"):
#   - it is exactly the files tests/grade/manifest.txt names, read from GRADE_SUB (default: the
#     VARIANT directory) as bytes and copied to $(GRADE_OUT)/stage/ under those names
#     (tests/grade/stage.sh); nothing else of it is used, and no name from it reaches make or a
#     shell;
#   - the kit's exercise headers and stubs come from a pristine, checksummed copy, never from the
#     working tree's labs/ (tests/grade/kit_include.sh: make grade-setup's copy, a handout's
#     tests/grade/kit/, or the committed tree), copied to $(GINC); every test, chapter and
#     submission file is compiled against that copy only;
#   - each submitted file is compiled alone, unprivileged and within limits, and may include
#     only that copy and the system headers (tests/grade/confined.sh); a file that fails any of
#     it is graded as the kit's stub, with the reason in the report.
# With solutions/ present, VARIANT=labs is judged against the reference runners of
# VARIANT=solutions (--reference); a handout without solutions/ grades a practice run.
# GRADE_FLAGS passes more options (build/$(VARIANT)/grade --help), e.g. --timeout 30 or
# --only 2.1 (one exercise); V=1 passes -v (every failed check, each failing test's output).
# Exit status: 0 at full marks; below them the grader's 1, which make reports as its own
# "Error 1" line and status 2 (GNU make cannot fail without it): the recipe says so first.
# Gradescope: docs/instructor-guide.md ("Gradescope").

.PHONY: grade-build grade-runners grade-reference grade-submission grade handout grade-setup grade-prep kernel

# The practice grade: on any system but Linux (macOS), or with PRACTICE=1 (how make test checks
# this path on Linux: tests/suites/practice_grade.sh). The same tests, runners and scores, but
# none of the Linux sandbox: the grader execs runners with limits only
# (tests/grade/sandbox_practice.c), submission files are compiled as they are, unconfined
# (tests/grade/practice_cc.sh), and runners are linked plainly (no -static, --wrap,
# --gc-sections, objcopy, strip: GNU tools that macOS lacks). Its own tree, $(B)/practice, so it
# never mixes with the sandboxed runners. The grader says on the terminal and in results.json
# that the sandboxed grade (Linux, the instructor's) is the one that counts.
GRADE_PRACTICE := $(if $(filter-out Linux,$(shell uname -s)),1,$(filter 1,$(PRACTICE)))
GB := $(B)$(if $(GRADE_PRACTICE),/practice)
GRADE_CC_SH := bash tests/grade/$(if $(GRADE_PRACTICE),practice_cc.sh,confined.sh)

# Detected only when a recipe needs them, once per make (each costs a compile and link; make
# grade must stay quick when nothing is to be rebuilt).
HAVE_SECCOMP = $(eval HAVE_SECCOMP := $(shell printf '\043include <seccomp.h>\nint main(void){return seccomp_init(0)==0;}' | $(CC) -x c - -o /dev/null -lseccomp 2>/dev/null && echo yes))$(HAVE_SECCOMP)
GRADER_CFLAGS = $(if $(GRADE_PRACTICE),,$(if $(HAVE_SECCOMP),-DAL_HAVE_SECCOMP))
GRADER_LIBS = $(if $(GRADE_PRACTICE),,$(if $(HAVE_SECCOMP),-lseccomp))

# The kit's pristine headers and stubs: $(GINC)/kit/labs/labNN/*.h, $(GINC)/common/**/*.h,
# $(GINC)/stubs/labNN/*.c (tests/grade/kit_include.sh, run by grade-prep before anything is
# compiled: its files are rewritten only when their content changes).
GINC := $(B)/grade-include
GINC_I := $(GINC)/kit/labs
GINC_STAMP := $(GINC)/.source
GRADE_SUB ?= $(VARIANT)
GRADE_OUT ?= $(if $(filter solutions,$(GRADE_SUB)),$(GB)/solutions/as-submission,$(if $(GRADE_PRACTICE),$(GB)/$(VARIANT),$(VOBJ)))
# Before anything of this make is compiled: the pristine headers made current, and the
# submission staged (only the manifest's files, read as bytes: tests/grade/stage.sh). The
# files it writes are rewritten only when their content changes, so make sees real changes.
grade-prep:
	@bash tests/grade/kit_include.sh '$(B)' && bash tests/grade/stage.sh '$(B)' '$(GRADE_SUB)' '$(GRADE_OUT)'
$(GINC_STAMP): grade-prep ;
$(GINC)/%.h: grade-prep ;
$(GINC)/stubs/%.c: grade-prep ;
$(GRADE_OUT)/stage/%.c: grade-prep ;
$(GINC)/stubs/%.cu: grade-prep ;
$(GRADE_OUT)/stage/%.cu: grade-prep ;
# Files, never make intermediates: make would delete them after the build (and a later make,
# unprivileged or partial, would miss them).
.PRECIOUS: $(GINC)/%.h $(GINC)/stubs/%.c $(GRADE_OUT)/stage/%.c $(GKIT)/stubs/%.o $(GRADE_OUT)/sub/%.o \
  $(GINC)/stubs/%.cu $(GRADE_OUT)/stage/%.cu

# Kit code in a runner (tests, chapters/, runner.c), compiled against $(GINC) only.
GKIT := $(B)/grade-kit
$(GKIT)/%.o: %.c $(FLAGS_STAMP) $(GINC_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -I$(GINC_I) -c $< -o $@
# The kit's stubs: what a missing or refused submission file is graded as.
$(GKIT)/stubs/%.o: $(GINC)/stubs/%.c $(FLAGS_STAMP) $(GINC_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fmacro-prefix-map=$(GINC)/stubs/= -I$(GINC_I) -c $< -o $@
# The kernel exercises (.cu): host C++ against the emulator, instrumented for its checks
# (memcheck, initcheck, racecheck) like the tests' build of cuda/ (the Makefile's EMU_*).
GRADE_CU_CC = $(CXX_EMU) $(EMU_CXXFLAGS) $(EMU_INSTRUMENT) -O2 -x c++
GRADE_CU_FILES := $(filter lab%.cu,$(file <tests/grade/manifest.txt))
# Standard CUDA made the emulator's C++ first (the Makefile's EMU_CU_PIPE, cuda/emu_rewrite.awk).
$(GRADE_CU_FILES:%.cu=$(GKIT)/stubs/%.o): $(GKIT)/stubs/%.o: $(GINC)/stubs/%.cu $(FLAGS_STAMP) $(GINC_STAMP) $(EMU_STAMP) cuda/emu_rewrite.awk
	@mkdir -p $(@D)
	$(call EMU_CU_PIPE,$*.cu) $(subst -x c++,,$(GRADE_CU_CC)) -I$(GINC_I) $(EMU_CU_IN)
# Every runner holds the emulator (kit code): the kernel tests run the student's kernels in it
# (tests/grade/kernel_test.h).
RUNNER_EMU := $(GKIT)/tests/grade/kernel_test.o $(B)/emu/cuda/emu.o
$(GKIT)/tests/grade/kernel_test.o: tests/grade/kernel_test.cpp tests/grade/kernel_test.h cuda/emu.h $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CXX_EMU) $(EMU_CXXFLAGS) -O2 -c $< -o $@
GKIT_LIBCHAP := $(GKIT)/libchap.a
$(GKIT_LIBCHAP): $(CHAP_SRC:%.c=$(GKIT)/%.o)
	@rm -f $@ && ar rcs $@ $^
# The graded tests and runner.c are built twice (tests/grade/grade.h): for the reference role
# with -DGRADE_REFERENCE (they compute expected values; linked with solutions/ only, never
# with a submission), and for the student role without it (the process that holds student
# code holds no expected value and no code that computes one).
GKIT_REF := $(GKIT)/reference
$(GKIT_REF)/%.o: %.c $(FLAGS_STAMP) $(GINC_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -DGRADE_REFERENCE -I$(GINC_I) -c $< -o $@
GRUNNER_OBJ = $(GKIT_ROLE)/tests/grade/runner.o
GVIS_OBJ = $(patsubst %.c,$(GKIT_ROLE)/%.o,$(sort $(wildcard tests/grade/lab*/*.c)))
# GRADE_HIDDEN_OBJ: hidden tests already compiled (an autograder whose hidden sources are gone),
# for the role of the runners being built
GRADE_HIDDEN_OBJ ?=
GHID_OBJ = $(strip $(patsubst %.c,$(GKIT_ROLE)/%.o,$(sort $(wildcard tests/hidden/lab*/*.c))) $(GRADE_HIDDEN_OBJ))
# Runners are linked statically where the toolchain can (libc.a, libgomp.a, libopenblas.a):
# the sandbox then refuses all new executable memory (no code patching), and a run starts faster.
RUNNER_STATIC = $(eval RUNNER_STATIC := $(shell printf 'int main(void){return 0;}' | $(CC) -static -x c - -o /dev/null $(LDLIBS) 2>/dev/null && echo -static))$(RUNNER_STATIC)
# The kit's fused kernels that compute an exercise's answer are wrapped: the backend table
# points at tests/grade/runner_traps.c's stand-ins and the kernels stay out of the runner.
RUNNER_WRAP := cpu_rnn_cell cpu_rnn_cell_grad cpu_additive_scores cpu_additive_scores_grad
RUNNER_TRAPS := $(GKIT)/tests/grade/runner_traps.o
# (practice: the two archives twice, for linkers without --start-group)
RUNNER_LIBS = $(if $(GRADE_PRACTICE),$(GKIT_LIBCHAP) $(LIBCOMMON) $(GKIT_LIBCHAP) $(LIBCOMMON) $(LDLIBS) $(EMU_LIBS),$(RUNNER_LIBS_SANDBOXED))
RUNNER_LIBS_SANDBOXED = $(RUNNER_STATIC) -Wl,--gc-sections $(RUNNER_WRAP:%=-Wl,--wrap=%) -Wl,--start-group $(GKIT_LIBCHAP) $(LIBCOMMON) -Wl,--end-group $(LDLIBS) $(EMU_LIBS)
# A runner holds no kit function that solves an exercise (tests/grade/kit_answers.txt: the
# link fails if one is there) and no symbol table or debug information to look code up in.
# runner_link OUTPUT, OBJECTS...
# Linked by tests/grade/confined.sh: as nobody when make runs as root, within limits; the
# runner ends up executable but not readable by nobody (0711). The linker's map stays beside
# it as .NAME.map (a dot: the recipe's grade-run* globs leave it), for tests/grade/isa_check.sh.
ifneq ($(GRADE_PRACTICE),)
define runner_link
	$(CC) $(CFLAGS) -o $@ $(2) $(RUNNER_EMU) $(RUNNER_LIBS)
endef
else
define runner_link
	@bash tests/grade/confined.sh link $@.tmp -- $(CC) $(CFLAGS) $(2) $(RUNNER_TRAPS) $(RUNNER_EMU) $(RUNNER_LIBS)
	@bad=$$(nm $@.tmp | awk 'NR == FNR { if ($$0 !~ /^#/ && NF) want[$$1] = 1; next } ($$NF in want) { printf "%s ", $$NF }' tests/grade/kit_answers.txt -); \
	  if [ -n "$$bad" ]; then echo "grade: $@ would hold the kit's own answer to an exercise: $${bad% } (tests/grade/kit_answers.txt)" >&2; rm -f $@.tmp; exit 1; fi
	strip --strip-all $@.tmp && mv -f $@.tmp $@
	@mv -f $@.tmp.map $(@D)/.$(@F).map 2>/dev/null || rm -f $(@D)/.$(@F).map
endef
endif

# The submission: the manifest's files, staged by grade-prep. The reference runners are
# $(B)/solutions/grade-run*; the solutions graded as a submission (VARIANT=solutions) go through
# the same staging and confined compile, into student-role runners in
# $(B)/solutions/as-submission.
HAVE_REFERENCE := $(if $(wildcard solutions/lab*),yes)
# reference: the runners compute expected values (the solutions' in $(B)/solutions, or a
# handout's practice runners, judged against themselves); student: a submission judged against
# a reference (solutions/ here, or GRADE_REF given, as on an autograder that deleted solutions/).
GRADE_ROLE ?= $(if $(filter $(GB)/solutions,$(GRADE_OUT)),reference,$(if $(or $(HAVE_REFERENCE),$(filter command line environment,$(origin GRADE_REF))),student,reference))
GKIT_ROLE = $(if $(filter reference,$(GRADE_ROLE)),$(GKIT_REF),$(GKIT))
GRADE_FILES := $(filter lab%.c,$(file <tests/grade/manifest.txt))
GSUB_C_OBJ := $(GRADE_FILES:%.c=$(GRADE_OUT)/sub/%.o)
GSUB_CU_OBJ := $(GRADE_CU_FILES:%.cu=$(GRADE_OUT)/sub/%.o)
GSUB_OBJ := $(GSUB_C_OBJ) $(GSUB_CU_OBJ)
# Each file alone, confined, checked (tests/grade/confined.sh); exporting nothing but exercise
# names (objcopy --keep-global-symbols: a `write` or `memcpy` of the student's becomes local to
# its file). A file that fails leaves the stub's object and a note (results.json shows it).
# The kernel track's C loops (GRADE_VEC_INFO) also get GCC's AVX2 vectorization report as a
# note, for information (confined.sh, vec_info.awk).
GRADE_VEC_INFO := lab02/masked_softmax_rows
# GRADE_OBJ_CACHE: a directory of compiled files by content (make grade-all: a file that several
# submissions hold byte for byte, such as an untouched stub, is compiled once per batch;
# confined.sh). Empty: none.
GRADE_OBJ_CACHE ?=
GSUB_DEPS := $(FLAGS_STAMP) $(GINC_STAMP) tests/grade/confined.sh tests/grade/include_check.awk \
  tests/grade/check_submission.sh tests/grade/exercise_symbols.txt tests/grade/kit_answers.txt \
  tests/grade/vec_info.awk tests/grade/keep_symbols.sh tests/grade/device_check.sh \
  tests/grade/device_symbols.txt tests/grade/c_only.txt $(if $(GRADE_PRACTICE),tests/grade/practice_cc.sh)
$(GSUB_C_OBJ): $(GRADE_OUT)/sub/%.o: $(GRADE_OUT)/stage/%.c $(GKIT)/stubs/%.o $(GSUB_DEPS)
	@$(if $(filter $*,$(GRADE_VEC_INFO)),VEC_INFO=1) GRADE_OBJ_CACHE='$(GRADE_OBJ_CACHE)' $(GRADE_CC_SH) compile '$(B)' $< $@ $(GRADE_OUT)/notes/$(subst /,_,$*).txt \
	  $(GKIT)/stubs/$*.o -- $(CC) $(CFLAGS)
$(GSUB_CU_OBJ): $(GRADE_OUT)/sub/%.o: $(GRADE_OUT)/stage/%.cu $(GKIT)/stubs/%.o $(GSUB_DEPS) $(EMU_STAMP)
	@GRADE_OBJ_CACHE='$(GRADE_OBJ_CACHE)' $(GRADE_CC_SH) compile '$(B)' $< $@ $(GRADE_OUT)/notes/$(subst /,_,$*).txt \
	  $(GKIT)/stubs/$*.o -- $(GRADE_CU_CC)

# The runners follow the test sources: a list file per runner, rewritten only when its set of
# test objects changes (so its time moves only then), relinks it; a runner with no hidden tests
# left is removed (grade-runners). The recipe runs on every make that needs a runner, whatever
# the goal (the object names are the kit's, never a submission's).
.PHONY: grade-lists-always
$(GRADE_OUT)/tests-visible.list: LIST = $(GVIS_OBJ)
$(GRADE_OUT)/tests-hidden.list: LIST = $(GHID_OBJ)
$(GRADE_OUT)/tests-visible.list $(GRADE_OUT)/tests-hidden.list: grade-lists-always
	@mkdir -p $(@D) && printf '%s\n' $(LIST) >$@.new && \
	  { cmp -s $@.new $@ && rm -f $@.new || mv -f $@.new $@; }
$(GRADE_OUT)/grade-run: $(GRUNNER_OBJ) $(GVIS_OBJ) $(GSUB_OBJ) $(GKIT_LIBCHAP) $(LIBCOMMON) tests/grade/kit_answers.txt $(RUNNER_TRAPS) $(RUNNER_EMU) $(GRADE_OUT)/tests-visible.list
	$(call runner_link,$@,$(GRUNNER_OBJ) $(GVIS_OBJ) $(GSUB_OBJ))
$(GRADE_OUT)/grade-run-hidden: $(GRUNNER_OBJ) $(GHID_OBJ) $(GSUB_OBJ) $(GKIT_LIBCHAP) $(LIBCOMMON) tests/grade/kit_answers.txt $(RUNNER_TRAPS) $(RUNNER_EMU) $(GRADE_OUT)/tests-hidden.list
	$(call runner_link,$@,$(GRUNNER_OBJ) $(GHID_OBJ) $(GSUB_OBJ))

# The grader: kit code only.
GRADER := $(if $(GRADE_PRACTICE),$(GB)/$(VARIANT),$(VOBJ))/grade
GRADER_OBJ := $(GB)/$(VARIANT)/grade-main.o $(GKIT)/tests/grade/sandbox$(if $(GRADE_PRACTICE),_practice).o
$(GB)/$(VARIANT)/grade-main.o: tests/grade/grader.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(GRADER_CFLAGS) $(DEPFLAGS) -DGRADE_VARIANT='"$(VARIANT)"' -c $< -o $@
$(GKIT)/tests/grade/sandbox.o: CFLAGS += $(GRADER_CFLAGS)
$(GRADER): $(GRADER_OBJ) $(LIBCOMMON)
	$(CC) $(CFLAGS) -o $@ $(GRADER_OBJ) $(LIBCOMMON) $(LDLIBS) $(GRADER_LIBS)

# The reference: the solutions' runners, when this checkout has solutions/.
GRADE_REF := $(if $(and $(HAVE_REFERENCE),$(filter student,$(GRADE_ROLE))),$(GB)/solutions)
# Runners judged against a reference are a submission's: never built with expected values.
# (Decided here, by the kit: a check at grading time would ask the runner, i.e. student code.)
ifneq ($(and $(GRADE_REF),$(filter reference,$(GRADE_ROLE))),)
$(error GRADE_REF=$(GRADE_REF) with GRADE_ROLE=reference: a submission judged against a reference is built in the student role, with no expected values in its runner)
endif

# Each exercise graded alone (the instructor's grade): where the reference's objects exist
# (built here from solutions/, or GRADE_REF/sub/ kept by the Gradescope recipe), one runner per
# level of the dependency map (tests/grade/deps.awk, from manifest.txt's last column) holds the
# student's files of that level, the references of the files they build on and the stubs of the
# rest; the grader runs each test in its level's runner (GRADE_OUT/exercises.txt says which). So
# a broken 2.1 costs 2.1 only, and no runner holds the reference of an exercise whose tests it
# runs. Without the reference's objects (a handout's practice run) one runner holds every file,
# and the grader reports a test that fails with a failing dependency as "blocked by" it.
GRADE_LEVELS_MK := $(B)/grade-levels.mk
$(GRADE_LEVELS_MK): tests/grade/manifest.txt tests/grade/deps.awk
	@mkdir -p $(@D) && awk -v MODE=mk -f tests/grade/deps.awk tests/grade/manifest.txt >$@.tmp && mv -f $@.tmp $@
include $(GRADE_LEVELS_MK)
GRADE_REF_SUB := $(if $(GRADE_REF),$(if $(filter $(B)/solutions,$(GRADE_REF)),$(GRADE_REF)/sub,$(if $(wildcard $(GRADE_REF)/sub/lab*),$(GRADE_REF)/sub)))
GRADE_ISOLATE := $(if $(GRADE_REF_SUB),yes)
GRADE_ALL_FILES := $(basename $(GRADE_FILES) $(GRADE_CU_FILES))
# level_objs K: the objects of level K's runner
level_objs = $(foreach f,$(GRADE_ALL_FILES),$(if $(filter $(f),$(GLEVEL_STU_$(1))),$(GRADE_OUT)/sub/$(f).o,$(if \
  $(filter $(f),$(GLEVEL_REF_$(1))),$(GRADE_REF_SUB)/$(f).o,$(GKIT)/stubs/$(f).o)))
define level_runner
$(GRADE_OUT)/level$(1)/grade-run: $(GRUNNER_OBJ) $(GVIS_OBJ) $(call level_objs,$(1)) $(GKIT_LIBCHAP) $(LIBCOMMON) tests/grade/kit_answers.txt $(RUNNER_TRAPS) $(RUNNER_EMU) $(GRADE_OUT)/tests-visible.list $(GRADE_LEVELS_MK)
	@mkdir -p $$(@D)
	$$(call runner_link,$$@,$(GRUNNER_OBJ) $(GVIS_OBJ) $(call level_objs,$(1)))
$(GRADE_OUT)/level$(1)/grade-run-hidden: $(GRUNNER_OBJ) $(GHID_OBJ) $(call level_objs,$(1)) $(GKIT_LIBCHAP) $(LIBCOMMON) tests/grade/kit_answers.txt $(RUNNER_TRAPS) $(RUNNER_EMU) $(GRADE_OUT)/tests-hidden.list $(GRADE_LEVELS_MK)
	@mkdir -p $$(@D)
	$$(call runner_link,$$@,$(GRUNNER_OBJ) $(GHID_OBJ) $(call level_objs,$(1)))
endef
ifeq ($(GRADE_ISOLATE),yes)
$(foreach k,$(GRADE_LEVELS),$(eval $(call level_runner,$(k))))
GRADE_RUNNERS := $(foreach k,$(GRADE_LEVELS),$(GRADE_OUT)/level$(k)/grade-run $(if $(GHID_OBJ),$(GRADE_OUT)/level$(k)/grade-run-hidden))
else
GRADE_RUNNERS := $(GRADE_OUT)/grade-run $(if $(GHID_OBJ),$(GRADE_OUT)/grade-run-hidden)
endif
# The grader's copy of the map: "#levels N" (N runners, or 0: one runner, a practice run),
# then deps.awk's table. Rewritten only when it changes.
$(GRADE_OUT)/exercises.txt: grade-lists-always $(GRADE_LEVELS_MK)
	@mkdir -p $(@D) && { echo '#levels $(if $(GRADE_ISOLATE),$(words $(GRADE_LEVELS)),0)'; \
	  awk -v MODE=table -f tests/grade/deps.awk tests/grade/manifest.txt; } >$@.new && \
	  { cmp -s $@.new $@ && rm -f $@.new || mv -f $@.new $@; }
grade-runners: $(GRADER) $(GRADE_RUNNERS) $(GRADE_OUT)/exercises.txt
	$(if $(GHID_OBJ),,@rm -f $(GRADE_OUT)/grade-run-hidden $(GRADE_OUT)/level*/grade-run-hidden)
	@# the other mode's runners: none may be left to run by mistake
	$(if $(GRADE_ISOLATE),@rm -f $(GRADE_OUT)/grade-run $(GRADE_OUT)/grade-run-hidden,@rm -rf $(GRADE_OUT)/level[0-9]*)
# Only the submission's objects (compiled as nobody when root: tests/grade/confined.sh).
grade-submission: $(GSUB_OBJ)
# A checksummed copy of the kit's headers and stubs from this tree, graded against from then on.
grade-setup:
	@bash tests/grade/kit_include.sh '$(B)' setup
# Built in this make (no recursive make: `make grade` stays quick when nothing is to be
# rebuilt): the tests and runner.c of the reference role, linked with solutions/.
REF_OUT := $(GB)/solutions
ifeq ($(GRADE_REF),$(REF_OUT))
REF_SUB_OBJ := $(patsubst solutions/%.c,$(REF_OUT)/sub/%.o,$(sort $(wildcard solutions/lab*/*.c))) \
  $(patsubst solutions/%.cu,$(REF_OUT)/sub/%.o,$(sort $(wildcard solutions/lab*/*.cu)))
REF_VIS_OBJ := $(patsubst %.c,$(GKIT_REF)/%.o,$(sort $(wildcard tests/grade/lab*/*.c)))
REF_HID_OBJ := $(patsubst %.c,$(GKIT_REF)/%.o,$(sort $(wildcard tests/hidden/lab*/*.c)))
# Kept (make would delete them as intermediates on a fresh build): grading.sh checks
# exercise_symbols.txt against their globals.
# (the practice grade's runners use the sandboxed build's raw objects: the same compile)
REF_RAW := $(B)/solutions/sub
.PRECIOUS: $(REF_RAW)/%.raw.o
$(REF_RAW)/%.raw.o: solutions/%.c $(FLAGS_STAMP) $(GINC_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -I$(GINC_I) -c $< -o $@
$(patsubst solutions/%.cu,$(REF_RAW)/%.raw.o,$(wildcard solutions/lab*/*.cu)): $(REF_RAW)/%.raw.o: solutions/%.cu $(FLAGS_STAMP) $(GINC_STAMP) $(EMU_STAMP) cuda/emu_rewrite.awk
	@mkdir -p $(@D)
	$(call EMU_CU_PIPE,$<) $(subst -x c++,,$(GRADE_CU_CC)) -I$(GINC_I) $(EMU_CU_IN)
$(REF_OUT)/sub/%.o: $(REF_RAW)/%.raw.o tests/grade/exercise_symbols.txt tests/grade/keep_symbols.sh
	@mkdir -p $(@D)
	$(if $(GRADE_PRACTICE),cp $< $@,bash tests/grade/keep_symbols.sh $< tests/grade/exercise_symbols.txt >$@.keep && \
	  objcopy --keep-global-symbols=$@.keep $< $@ && rm -f $@.keep)
$(REF_OUT)/grade-run: $(GKIT_REF)/tests/grade/runner.o $(REF_VIS_OBJ) $(REF_SUB_OBJ) $(GKIT_LIBCHAP) $(LIBCOMMON) tests/grade/kit_answers.txt $(RUNNER_TRAPS) $(RUNNER_EMU)
	$(call runner_link,$@,$(GKIT_REF)/tests/grade/runner.o $(REF_VIS_OBJ) $(REF_SUB_OBJ))
$(REF_OUT)/grade-run-hidden: $(GKIT_REF)/tests/grade/runner.o $(REF_HID_OBJ) $(REF_SUB_OBJ) $(GKIT_LIBCHAP) $(LIBCOMMON) tests/grade/kit_answers.txt $(RUNNER_TRAPS) $(RUNNER_EMU)
	$(call runner_link,$@,$(GKIT_REF)/tests/grade/runner.o $(REF_HID_OBJ) $(REF_SUB_OBJ))
grade-reference: $(REF_OUT)/grade-run $(if $(strip $(REF_HID_OBJ) $(GRADE_HIDDEN_OBJ)),$(REF_OUT)/grade-run-hidden)
else
grade-reference:
endif

# The grader's own tests (tests/grader/, run by tests/suites/grading.sh): a fake lab 99 graded
# with a well-behaved submission (also the reference) and a hostile one. The grader here is
# build/grader/grade; each submission's runners are in build/grader/NAME/.
SELFTEST_DIR := $(B)/grader
# good: the reference role (its runs supply the expected values); hostile: the student role.
selftest_role = $(if $(filter good,$(1)),$(GKIT_REF),$(GKIT))
SELFTEST := $(SELFTEST_DIR)/grade $(foreach s,good hostile,$(SELFTEST_DIR)/$(s)/grade-run $(SELFTEST_DIR)/$(s)/grade-run-hidden)
$(SELFTEST_DIR)/grade: $(GRADER)
	@mkdir -p $(@D) && cp $< $@
$(SELFTEST_DIR)/%/sub.o: $(GKIT)/tests/grader/submission_%.o tests/grader/fake_symbols.txt
	@# a build tree from before the runner split has build/grader/good and /hostile as programs
	@[ -d $(@D) ] || { rm -f $(@D); mkdir -p $(@D); }
	objcopy --keep-global-symbols=tests/grader/fake_symbols.txt $< $@
$(SELFTEST_DIR)/good/grade-run: $(addprefix $(GKIT_REF)/tests/,grader/fake_tests.o grade/runner.o)
$(SELFTEST_DIR)/hostile/grade-run: $(addprefix $(GKIT)/tests/,grader/fake_tests.o grade/runner.o)
$(SELFTEST_DIR)/good/grade-run-hidden: $(addprefix $(GKIT_REF)/tests/,grader/hidden/fake_hidden.o grade/runner.o)
$(SELFTEST_DIR)/hostile/grade-run-hidden: $(addprefix $(GKIT)/tests/,grader/hidden/fake_hidden.o grade/runner.o)
$(SELFTEST_DIR)/%/grade-run: $(SELFTEST_DIR)/%/sub.o $(LIBCOMMON)
	$(CC) $(CFLAGS) -o $@ $< $(addprefix $(call selftest_role,$*)/tests/,grader/fake_tests.o grade/runner.o) $(RUNNER_STATIC) $(LIBCOMMON) $(LDLIBS)
$(SELFTEST_DIR)/%/grade-run-hidden: $(SELFTEST_DIR)/%/sub.o $(LIBCOMMON)
	$(CC) $(CFLAGS) -o $@ $< $(addprefix $(call selftest_role,$*)/tests/,grader/hidden/fake_hidden.o grade/runner.o) $(RUNNER_STATIC) $(LIBCOMMON) $(LDLIBS)

.SECONDARY: $(GKIT)/tests/grader/submission_good.o $(GKIT)/tests/grader/submission_hostile.o \
  $(SELFTEST_DIR)/good/sub.o $(SELFTEST_DIR)/hostile/sub.o
grade-build: grade-runners grade-reference $(SELFTEST)

# A submission that does not build (or is refused) still leaves a results.json (score 0, the
# build errors).
# Without a reference (a handout's practice run) the kit's recorded reference kernel counters
# stand beside the student's (tests/grade/reference_counters.txt, grader.c).
# The tests' version, recorded in results.json (extra_data.tests_version) so that a regrade can
# say what changed: a hash of the graded tests, the manifest and the reference runners (which
# hold the hidden tests where their sources are gone), and git describe where there is a .git.
GRADE_TESTS_VERSION = $(shell { cat tests/grade/manifest.txt tests/grade/*.[ch] tests/grade/lab*/*.[ch] \
  $(wildcard tests/hidden/lab*/*.c) $(if $(GRADE_REF),$(wildcard $(GRADE_REF)/grade-run*)); } 2>/dev/null | \
  sha256sum | cut -c1-12)$(shell git describe --always --dirty 2>/dev/null | sed 's/^/ (git /; s/$$/)/')
GRADE_RUN_FLAGS = --runner $(GRADE_OUT) $(if $(GRADE_REF),--reference $(GRADE_REF),--counters tests/grade/reference_counters.txt) --notes $(GRADE_OUT)/notes \
  --tests-version '$(GRADE_TESTS_VERSION)'
# What the practice grade needs of the system, checked before anything is built: GNU make 4
# ($(file ...) above), bash 4 (stage.sh's associative arrays), GNU stat and sha256sum (stage.sh,
# kit_include.sh). macOS has make 3.81, bash 3.2 and BSD tools: one message says what to do.
GRADE_NEEDS_BREW := brew install make bash coreutils, then run: gmake grade (the Makefile puts Homebrew's coreutils first on PATH)
grade_preflight = $(if $(filter 3.%,$(MAKE_VERSION)),echo "grade: make grade needs GNU make 4 (this is make $(MAKE_VERSION)): $(GRADE_NEEDS_BREW)" >&2; exit 2;) \
  bash -c '[ "$${BASH_VERSINFO[0]}" -ge 4 ]' 2>/dev/null || { echo "grade: make grade needs bash 4 or newer first on PATH (found $$(bash -c 'echo $$BASH_VERSION')): $(GRADE_NEEDS_BREW)" >&2; exit 2; }; \
  { stat -c %s Makefile && echo | sha256sum; } >/dev/null 2>&1 || { echo "grade: make grade needs GNU stat and sha256sum (coreutils): $(GRADE_NEEDS_BREW)" >&2; exit 2; }
# The build's output goes to a log; tests/tools/progress.sh says what it builds every 8 s (a
# first build takes minutes). grade_build FLAGS: FLAGS are the grader's (its --json).
GRADE_BUILD_LOG ?= $(B)/grade-build.log
define grade_build
	@$(if $(GRADE_PRACTICE),$(grade_preflight))
	@mkdir -p $(B) $(dir $(GRADE_BUILD_LOG)) && bash tests/tools/progress.sh "grade: building the grader and its runners" \
	  $(GRADE_BUILD_LOG) $(MAKE) --no-print-directory grade-runners grade-reference || \
	  { tail -n 30 $(GRADE_BUILD_LOG); bash tests/grade/build_failed.sh $(GRADE_BUILD_LOG) \
	    $(1) --tests-version '$(GRADE_TESTS_VERSION)'; exit 1; }
endef
grade:
	$(call grade_build,$(GRADE_FLAGS))
	$(if $(and $(GRADE_REF),$(if $(GRADE_ISOLATE),,no)),@echo "grade: $(GRADE_REF) has no sub/ (the reference's objects): each exercise is graded with the submission's own code for the exercises it builds on; keep them there to grade each exercise alone (docs/instructor-guide.md, Gradescope)" >&2)
	@$(GRADER) $(GRADE_RUN_FLAGS) $(if $(LAB),--lab $(LAB)) $(if $(filter 1,$(V)),-v) $(GRADE_FLAGS) || \
	  { s=$$?; [ $$s -ne 1 ] || echo "(not full marks: make grade exits non-zero, so make adds an \"Error 1\" line)"; exit $$s; }

# make kernel EX=5.2: one kernel exercise alone (2.6, 4.4, 4.5, 5.2, 6.7, 6.8: the .cu files of
# the manifest), on its lab's shapes: its graded tests, each in its own process with the
# student's kernel and the kit's stubs elsewhere (so no other exercise need be finished), in
# the native CUDA emulator with its sanitizers on, verbose: every failed check of the output,
# the sanitizer's whole report, the memory counters beside the reference kernel's (a handout
# has no reference runner: the kit's recorded reference counters stand in). Nothing is written
# (no results.json). Exit 0 whenever the tests ran, passed or not (a failure is the output,
# not an error of make's); non-zero when it could not run.
# Hook: the PTX virtual GPU (cuda/vgpu/, DESIGN.md) is to run these same tests when present;
# until it is wired in here, this says that it runs the native emulator.
KERNEL_EXERCISES = $(shell awk '$$1 ~ /\.cu$$/ {gsub(",", " ", $$2); print $$2}' tests/grade/manifest.txt)
kernel:
	@case " $(strip $(KERNEL_EXERCISES)) " in *" $(EX) "*) ;; *) \
	  echo "make kernel: EX=N.M names a kernel exercise: one of $(strip $(KERNEL_EXERCISES)) (e.g. make kernel EX=5.2)" >&2; \
	  exit 2 ;; esac
	@[ ! -d cuda/vgpu ] || echo "make kernel: cuda/vgpu/ (the virtual GPU) is not wired into make kernel yet: the native emulator runs it"
	@echo "make kernel: exercise $(EX) alone, in the native CUDA emulator (sanitizers on)"
	$(call grade_build,--json '')
	@$(GRADER) $(GRADE_RUN_FLAGS) --lab $(firstword $(subst ., ,$(EX))) --only $(EX) -v --json '' || [ $$? -eq 1 ]

handout:
	@bash tests/grade/handout.sh $(B)/attention-lab-handout.tar.gz

# What a student hands in: the manifest's files of labs/, as labs/labNN/FILE in a zip.
.PHONY: submission
submission:
	@bash tests/grade/submission.sh $(B)/submission.zip

# A course's batch (tests/grade/grade_all.sh): every submission folder under SUBS graded as
# make grade grades one, GRADE_JOBS at a time (default: the cores), into GRADE_ALL_OUT (default
# $(B)/grade-all): per student results.json and feedback.txt, then grades.csv and the class
# report. What every submission shares is built once, by grade-batch-prep: the grader, the
# reference runners and objects, the kit's stubs, tests and chapter code.
.PHONY: grade-all grade-batch-prep regrade
# make regrade SUBS=DIR: grade-all again into the same GRADE_ALL_OUT (after a test changed), then
# the students whose score moved, from the previous grades.csv (grade_all.sh keeps it).
regrade:
	@[ -s '$(GRADE_ALL_OUT)/grades.csv' ] || { echo "regrade: no earlier batch in $(GRADE_ALL_OUT) (make grade-all SUBS=DIR first, with the same GRADE_ALL_OUT)" >&2; exit 2; }
	@$(MAKE) --no-print-directory grade-all
GRADE_ALL_OUT ?= $(B)/grade-all
# (the sub-makes get no MAKEFLAGS: GRADE_REF and GRADE_HIDDEN_OBJ given to this make are
# passed on by name, and B)
grade-all:
	@B='$(B)' REF='$(GRADE_REF)' REF_GIVEN='$(if $(filter command line environment,$(origin GRADE_REF)),yes)' \
	  HIDDEN_OBJ='$(GRADE_HIDDEN_OBJ)' bash tests/grade/grade_all.sh '$(SUBS)' '$(GRADE_ALL_OUT)' '$(GRADE_JOBS)'
grade-batch-prep: $(GRADER) grade-reference $(GRUNNER_OBJ) $(GVIS_OBJ) $(GHID_OBJ) $(GKIT_LIBCHAP) \
  $(RUNNER_TRAPS) $(RUNNER_EMU) $(GRADE_FILES:%.c=$(GKIT)/stubs/%.o) $(GRADE_CU_FILES:%.cu=$(GKIT)/stubs/%.o) \
  $(if $(GRADE_REF_SUB),$(GRADE_ALL_FILES:%=$(GRADE_REF_SUB)/%.o)) $(GRADE_LEVELS_MK)
