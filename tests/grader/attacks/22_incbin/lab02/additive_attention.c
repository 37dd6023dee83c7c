/* Attack 22, the same through a section attribute (its name goes into the assembly as is).
 * Expected: refused. */
#include "lab02/lab02.h"
__attribute__((section(".rodata\n.incbin \"/etc/hostname\"\n#"), used)) static const char attack22_b[1];
