/* Attack 21 (issue 25, route 3): include the answer. On a checkout the old build compiled
 * `#include "../../solutions/..."` (the submission's directory sits in labs/, the solutions two
 * levels up); through the kit's include path (build/grade-include/kit/labs) the same works from
 * anywhere. Expected: refused at the #include with file and line; the file is graded as the
 * stub (with the check gone, this file is the solution and scores). */
#include "lab02/../../../../../solutions/lab02/masked_softmax.c"
