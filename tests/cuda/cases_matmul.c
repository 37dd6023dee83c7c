/* cases_matmul.c — (not written yet) */
#include "cuda_check.h"

const CcCase cases_matmul[] = {{0}};
