/* recover.h: a step of an interrupted plan, as its record gives it
 * (intent.c writes it, recover.c reads it, recmove.c acts on it). */
#ifndef LS_RECOVER_H
#define LS_RECOVER_H

#include <stdbool.h>
#include <sys/types.h>

struct broker;

struct rstep {
	int kind;              /* STEP_*, or STEP_PARK for a mount moved
				  aside within a step ("aside" lines) */
	int kid;               /* the mount: the step's, or the one it made */
	dev_t dev;
	char prog;             /* '-', 'S', 'P', 'D'; an aside's 'P' or 'B' */
	int top;               /* a step's 'P': the mount a copy went on
				  (copy.c) */
	char *was, *to;        /* NULL: "-" */
};

/* recmove.c: the kernel's mounts found by id, moved and detached */
int rec_move(const struct broker *b, const struct rstep *s,
	     const char *place);
int rec_drop(const struct rstep *s);
bool rec_happened(const struct rstep *s);
void rec_find_copies(struct rstep *s, size_t n);

#endif
