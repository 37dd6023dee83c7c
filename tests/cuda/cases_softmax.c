/* cases_softmax.c — (not written yet) */
#include "cuda_check.h"

const CcCase cases_softmax[] = {{0}};
