/* cases_nn.c — (not written yet) */
#include "cuda_check.h"

const CcCase cases_nn[] = {{0}};
