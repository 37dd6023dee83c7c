/* Attack 27 (issue 25, the confinement): include a device that never ends. The preprocessor
 * reads /dev/zero before it can say which file it opened. Expected: stopped by the memory or
 * CPU limit, the file scores 0 with a one-line reason, results.json written in time. */
#include "/dev/zero"
