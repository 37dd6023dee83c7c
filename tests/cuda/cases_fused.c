/* cases_fused.c — (not written yet) */
#include "cuda_check.h"

const CcCase cases_fused[] = {{0}};
