/* exec.h: the executor's room (daemon/broker/exec/): an engine plan
 * carried out with plain private mounts, step by step (exec.c), recorded,
 * undone or committed (execplan.c: apply_plan(), the one way every plan
 * goes); copies bound straight on their places (copy.c); the places it
 * works at (place.c); unmounts in batches (umounts.c); the busy probe the
 * engine asks (busy.c); new filesystems made as the caller would make them
 * (newmount.c, newroot.c).
 *
 * May call persistence (persist/: the intent record, the save),
 * resolution (resolve/: a new filesystem's paths), the hold (hold/) and
 * the ground (base/).
 */
#ifndef LS_EXEC_H
#define LS_EXEC_H

#include <limits.h>
#include "broker.h"

/* execplan.c */
int apply_plan(struct request *r, int err);
int exec_plan(struct request *r);
void exec_undo(struct request *r);
void exec_forget(struct request *r);
void exec_commit(struct broker *b);

/* exec.c */
int stage_new(struct request *r, const char *source, const char *type,
	      unsigned long ms, const char *data);
void unstage(struct request *r);
int exec_step(struct request *r, const struct step *s);
void exec_drop_parks(struct broker *b);

/* place.c */
int place_path(struct broker *b, const char *base, bool file,
	       char *buf, size_t size, uint64_t seq);
void drop_place(const char *base, const struct mount *m);
int named_fd(const struct request *r, const struct mount *m, const char *dir,
	     bool target);
int open_loc(struct request *r, struct mount *m, const char *dir,
	     bool target, int *out, char **cover);
int ns_place(struct broker *b, struct mount *m);

/* copy.c: a copy bound straight on its place, alone (copy_bind()) or
 * in a batch (execplan.c: each prepared, its "P" recorded, made) */
struct copy {
	const struct step *s;
	struct mount *m;
	const struct handle *sh;   /* the source's */
	int dir, src, at, top;     /* at: the place; top: the mount on it */
	bool owndir, ownsrc;       /* dir, src opened for the copy */
	char name[NAME_MAX + 1];   /* the place's name in dir */
};
int copy_bind(struct request *r, const struct step *s);
int copy_prepare(struct request *r, const struct step *s, struct copy *c);
int copy_make(struct request *r, const struct copy *c);
void copy_release(struct copy *c);

/* umounts.c */
void umount_all(const int *fds, int *errs, size_t n);

/* busy.c */
bool mount_busy(void *ctx, const struct mount *m);

/* newmount.c, newroot.c */
int newmount_make(struct request *r, const char *source, const char *type,
		  unsigned long flags, const char *data);
int newmount_reset(struct broker *b);

#endif
