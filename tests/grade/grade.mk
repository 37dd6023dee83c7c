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
$(GRADER): $(GRADER_MAIN) $(GRADE_OBJ) $(LIBS_ALL)
	$(CC) $(CFLAGS) -o $@ $(GRADER_MAIN) $(GRADE_OBJ) $(LINK_LIBS)

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

grade: $(GRADER)
	@$(GRADER) $(if $(LAB),--lab $(LAB)) $(GRADE_FLAGS)

handout:
	@bash tests/grade/handout.sh $(B)/attention-lab-handout.tar.gz
