/* journal.h: the undo journal of an open plan, and the journaled primitives
 * every engine file uses to change the graph.  Internal to the engine.
 */
#ifndef LS_JOURNAL_H
#define LS_JOURNAL_H

#include <stdlib.h>
#include "engine.h"

void *grow(void *v, size_t *cap, size_t n, size_t size);
void jwrite(struct graph *g, void *slot, const void *val, size_t size);
/* Assign an lvalue of the graph, remembering its old value. */
#define JSET(g, lv, v) do { __typeof__(lv) jv_ = (v); \
	jwrite((g), &(lv), &jv_, sizeof jv_); } while (0)
void jset_str(struct graph *g, char **slot, const char *val);

void jlist_add(struct graph *g, struct list *n, struct list *after);
void jlist_add_tail(struct graph *g, struct list *n, struct list *head);
void jlist_del_init(struct graph *g, struct list *n);

unsigned group_new(struct graph *g);
void group_release(struct graph *g, unsigned id);

struct mount *mount_new(struct graph *g, struct fs *fs, const char *root,
			const char *devname, unsigned flags, struct ns *ns);
void mount_attach(struct graph *g, struct mount *m, struct mount *parent,
		  const char *mp);
void mount_detach(struct graph *g, struct mount *m);
void mount_kill(struct graph *g, struct mount *m);

void plan_step(struct graph *g, enum step_kind kind, const struct mount *m,
	       const struct mount *src, const struct mount *parent,
	       const char *dir, unsigned long flags);

/* options.c */
unsigned sb_flags(unsigned long ms, unsigned old, unsigned mask);

/* propagate.c */
struct mount *propagation_next(struct mount *m, struct mount *origin);
bool is_shared(const struct mount *m);
void set_shared(struct graph *g, struct mount *m);
void change_propagation(struct graph *g, struct mount *m, int type);
void transfer_slaves(struct graph *g, struct mount *m, struct mount *to);
struct mount *next_group(struct mount *m, struct mount *origin, uint64_t seq0);

enum { CL_SLAVE = 1, CL_MAKE_SHARED = 2, CL_COPY_UNBINDABLE = 4,
       CL_RECURSIVE = 8 };
struct mount *copy_tree(struct graph *g, struct mount *src, const char *root,
			int flags, struct ns *ns);

#endif
