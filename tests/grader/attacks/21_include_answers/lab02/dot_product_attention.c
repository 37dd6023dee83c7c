/* Attack 21, the build tree: the kit's own compiled files. Expected: refused. */
#include "lab02/../../../../grade-include/stubs/lab02/dot_product_attention.c"
