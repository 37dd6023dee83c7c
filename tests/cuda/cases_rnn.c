/* cases_rnn.c — (not written yet) */
#include "cuda_check.h"

const CcCase cases_rnn[] = {{0}};
