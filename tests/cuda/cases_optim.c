/* cases_optim.c — (not written yet) */
#include "cuda_check.h"

const CcCase cases_optim[] = {{0}};
