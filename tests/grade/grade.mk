# grading rules (owned by the grading work): grade-build, grade, handout
.PHONY: grade-build grade handout
grade-build:
