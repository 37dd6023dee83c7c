/* Attack 23 (issue 25, route 9): a file that includes itself twice per level, 40 levels deep
 * (2^40 inclusions): the old build compiled it silently forever, before any results.json.
 * Expected: refused at the first self-inclusion, at once; results.json written. */
#ifndef DEPTH
#define DEPTH 0
#include "masked_softmax.c"
#elif DEPTH < 40
#include "masked_softmax.c"
#include "masked_softmax.c"
#endif
