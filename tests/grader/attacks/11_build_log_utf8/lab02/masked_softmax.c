/* Attack 11 (issue 15): a compiler error whose message holds a byte that is not UTF-8 (the
 * identifier below). The old build_failed.sh ran grep on the log, which then said "binary file
 * matches" and lost every message. Expected: results.json (score 0) is valid JSON and names
 * the error. */
#include "lab02/lab02.h"

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) { return undeclared_ÿ_name; }
