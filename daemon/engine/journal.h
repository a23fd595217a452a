/* journal.h: the engine's internal interface: allocation, ids, the undo
 * journal of an open plan, and the journaled primitives every engine file
 * uses to change the graph.
 *
 * Every primitive is all or nothing: it returns 0, or -ENOMEM having
 * changed nothing.  An operation that meets an error simply returns it:
 * plan_abandon() undoes whatever the operation had done before.
 */
#ifndef LS_JOURNAL_H
#define LS_JOURNAL_H

#include <stdlib.h>
#include "engine.h"
#include "alloc.h"
#include "vec.h"


/* idpool.c */
void idpool_init(struct idpool *p);
int id_get(struct idpool *p, unsigned *id);
void id_put(struct idpool *p, unsigned id);
void idpool_free(struct idpool *p);

/* journal.c.  Outside a plan the primitives change the graph for good:
 * writes are plain stores, a commit action runs at once. */
typedef void (*jfn)(struct graph *g, void *p, unsigned id);
int jreserve(struct graph *g, size_t n);
int jwrite(struct graph *g, void *slot, const void *val, size_t size);
/* Assign an lvalue of the graph, remembering its old value: 0 or -ENOMEM. */
#define JSET(g, lv, v) __extension__ ({ __typeof__(lv) jv_ = (v); \
	jwrite((g), &(lv), &jv_, sizeof jv_); })
int jset_str(struct graph *g, char **slot, const char *val);
int jcall(struct graph *g, jfn undo, jfn commit, void *p, unsigned id);
int jlist_add(struct graph *g, struct list *n, struct list *after);
int jlist_add_tail(struct graph *g, struct list *n, struct list *head);
int jlist_del_init(struct graph *g, struct list *n);
void journal_rollback(struct graph *g, size_t mark);
void journal_commit(struct graph *g);

/* graph.c */
struct mount *mount_new(struct graph *g, struct fs *fs, const char *root,
			const char *devname, unsigned flags, struct ns *ns);
int mount_attach(struct graph *g, struct mount *m, struct mount *parent,
		 const char *mp);
int mount_detach(struct graph *g, struct mount *m);
int mount_kill(struct graph *g, struct mount *m);
void mount_free(struct graph *g, struct mount *m);
int fs_adopt(struct graph *g, struct fs *fs);

/* plan.c */
int plan_step(struct graph *g, enum step_kind kind, const struct mount *m,
	      const struct mount *src, const struct mount *parent,
	      const char *dir, unsigned long flags);

/* attach.c */
int plan_tree(struct graph *g, struct mount *t);

/* mountinfo.c: the optional fields, at most " shared:N master:N
 * propagate_from:N unbindable" with 10-digit numbers. */
enum { OPTIONAL_MAX = 80 };
void optional_fields(char buf[OPTIONAL_MAX], const struct mount *m,
		     struct ns *ns, struct loc root);

/* options.c */
unsigned sb_flags(unsigned long ms, unsigned old, unsigned mask);

/* propagate.c */
int group_new(struct graph *g, unsigned *id);
int group_release(struct graph *g, unsigned id);
bool is_shared(const struct mount *m);
int set_shared(struct graph *g, struct mount *m);
int change_propagation(struct graph *g, struct mount *m, int type);
int transfer_slaves(struct graph *g, struct mount *m, struct mount *to);
struct mount *next_group(struct mount *m, struct mount *origin, uint64_t seq0);

enum { CL_SLAVE = 1, CL_MAKE_SHARED = 2, CL_COPY_UNBINDABLE = 4,
       CL_RECURSIVE = 8 };
struct mount *copy_tree(struct graph *g, struct mount *src, const char *root,
			int flags, struct ns *ns);
struct mount *copy_tree_skip(struct graph *g, struct mount *src,
			     const char *root, int flags, struct ns *ns,
			     busy_fn skip, void *ctx);

/* check_plan.c: the checker's snapshot and replay */
int plan_snapshot(struct graph *g);
void plan_snapshot_free(struct graph *g);

#endif
