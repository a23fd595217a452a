/* nscall.h: what nscall.c and nscall_io.c share: the output of a step
 * and the step tables' checks. */
#ifndef NSCALL_H
#define NSCALL_H

extern const char *prefix;     /* "child " in a child's steps */
/* "STEP: ok" for r >= 0, else "STEP: ENAME" of errno */
void result(const char *step, long r);

/* A step that takes k words after its name, or its usage error. */
#define NEED(k) do { if (n < (k) + 1) goto usage; *used = (k) + 1; } while (0)

/* nscall_io.c: each 1 when a[0] is none of its steps, -1 on a usage
 * error, else 0 with *used words taken */
int file_step(char **a, int n, int *used);
int end_step(char **a, int n, int *used);
void show_dir(const char *dir);

#endif
