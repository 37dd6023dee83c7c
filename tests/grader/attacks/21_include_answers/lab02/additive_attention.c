/* Attack 21, absolute path: any file the compiler can read. Expected: refused. */
#include "/etc/hostname"
