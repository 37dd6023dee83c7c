/* cases_shape.c — (not written yet) */
#include "cuda_check.h"

const CcCase cases_shape[] = {{0}};
