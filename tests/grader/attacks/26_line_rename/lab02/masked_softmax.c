/* Attack 26 (issue 25, the confinement): a #line naming a system header, so that what follows
 * reads as the system's (where inline assembly is allowed) and any check keyed on file names
 * is fooled. Expected: refused at the #line. */
#include "lab02/lab02.h"
#line 1 "/usr/include/stdio.h"
__asm__(".incbin \"/etc/hostname\"");
