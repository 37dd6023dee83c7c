# grade.mk — grading rules, included by the Makefile.
#
#   make grade [LAB=NN] [VARIANT=solutions|labs]   score table, results.json; exit 0 at full marks
#   make handout                                   build/attention-lab-handout.tar.gz
#   make grade-build                               the grader and the grader's own test binaries
#
# One grader per variant, build/$(VARIANT)/grade: the harness (tests/grade/grader.c), every
# graded test (tests/grade/labNN/*.c, and tests/hidden/labNN/*.c where present) and the
# variant's libraries. Test objects are linked as objects, not from an archive, so that every
# GRADED_TEST's constructor is kept. GRADE_FLAGS passes more options (build/$(VARIANT)/grade
# --help), e.g. -v or --timeout 30. On Gradescope, with the student's labs/ copied in:
#   make grade VARIANT=labs GRADE_FLAGS="--json /autograder/results/results.json"

.PHONY: grade-build grade handout

GRADE_SRC := $(sort $(wildcard tests/grade/lab*/*.c) $(wildcard tests/hidden/lab*/*.c))
GRADE_OBJ := $(GRADE_SRC:%.c=$(VOBJ)/%.o)
GRADER_MAIN := $(VOBJ)/tests/grade/grader.o
GRADER := $(VOBJ)/grade
GRADE_FLAGS ?=

$(GRADER_MAIN): CFLAGS += -DGRADE_VARIANT='"$(VARIANT)"'
$(GRADER): $(GRADER_MAIN) $(GRADE_OBJ) $(LIBS_ALL) $(VOBJ)/submission.ok
	$(CC) $(CFLAGS) -o $@ $(GRADER_MAIN) $(GRADE_OBJ) $(LINK_LIBS)

# Student code is linked into the grader: refuse what could tamper with it (check_submission.sh).
$(VOBJ)/submission.ok: $(EX_OBJ) tests/grade/check_submission.sh tests/grade/exercise_symbols.txt
	@bash tests/grade/check_submission.sh $(EX_OBJ) && touch $@

# The grader's own tests (tests/grader/, run by tests/suites/grading.sh): a fake lab 99 graded
# against a well-behaved and a hostile submission. They need only libcommon.
SELFTEST_DIR := $(B)/grader
SELFTEST := $(SELFTEST_DIR)/good $(SELFTEST_DIR)/hostile
SELFTEST_OBJ := $(OBJ)/tests/grade/grader.o $(OBJ)/tests/grader/fake_tests.o \
  $(OBJ)/tests/grader/hidden/fake_hidden.o
$(SELFTEST): $(SELFTEST_DIR)/%: $(OBJ)/tests/grader/submission_%.o $(SELFTEST_OBJ) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(SELFTEST_OBJ) $(LIBCOMMON) $(LDLIBS)

grade-build: $(GRADER) $(SELFTEST)

# A grader that does not build still leaves a results.json (score 0, the build errors).
grade:
	@mkdir -p $(B) && $(MAKE) --no-print-directory $(GRADER) >$(B)/grade-build.log 2>&1 || \
	  { tail -n 30 $(B)/grade-build.log; bash tests/grade/build_failed.sh $(B)/grade-build.log \
	    $(GRADE_FLAGS); exit 1; }
	@$(GRADER) $(if $(LAB),--lab $(LAB)) $(GRADE_FLAGS)

handout:
	@bash tests/grade/handout.sh $(B)/attention-lab-handout.tar.gz
