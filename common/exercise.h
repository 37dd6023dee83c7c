/* exercise.h — the marker every stub uses. A stub calls EXERCISE_TODO, which prints
 *   exercise 2.1 masked_softmax is not implemented yet (labs/lab02/masked_softmax.c)
 * once and makes the call fail cleanly: the stub then returns NULL (or NAN, or -1), and
 * callers check with NEED(). grep -rn EXERCISE_TODO labs/ lists every stub left. */
#ifndef AL_EXERCISE_H
#define AL_EXERCISE_H

#ifdef __cplusplus
extern "C" { /* kernel exercises (.cu, compiled as C++) call the stub marker too */
#endif

void exercise_todo(const char *number, const char *name, const char *file);
/* How many times a stub has been called so far (a caller tells a stub's NAN from a bug's). */
int exercise_todo_calls(void);
#define EXERCISE_TODO(number, name) exercise_todo((number), (name), __FILE__)

/* Labs: stop the chapter cleanly (exit 3) when an exercise returned NULL. ptr is evaluated
 * once (it is usually a call); __typeof__ keeps its pointer type. */
#define NEED(ptr, what) ((__typeof__(ptr))exercise_need((ptr), (what)))
void *exercise_need(void *ptr, const char *what);
void exercise_missing(const char *what);

#ifdef __cplusplus
}
#endif
#endif
