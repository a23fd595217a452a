/* exec.c: the executor.  It carries an engine plan out with plain private
 * mounts (mount(2) with MS_BIND, MS_MOVE and MS_REMOUNT, umount2(2)) and
 * nothing newer: no propagation flags, no namespaces, no new mount API.
 *
 * Every mount of the graph is reached through its handle (broker.h), never
 * through a path string of the host: jails are untrusted, and a path could
 * be covered or swapped.  A mount is made at a staging directory of the
 * broker's own, given its handle there, then moved into place; so the
 * handle exists even when the place is covered.
 *
 * Handles pin their mounts, so the kernel would call every mount busy;
 * the engine decides busy-ness itself (busy.c, semantics.md 5.3) and
 * the executor then unmounts with MNT_DETACH.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "broker.h"
#include "base/base.h"
#include "base/log.h"
#include "exec/exec.h"
#include "hold/hold.h"
#include "persist/persist.h"

static int park(struct broker *b, struct mount *m);

/* Moves m (by its handle) to (parent, dir), on top of what is there.  A
 * place under another mount (a receiver whose directory is covered,
 * semantics.md 3.2: receivers are places, not paths) is reached by moving
 * the covering stacks aside for the time of the move, then back; each is
 * in the intent record while it is away (a crash puts it back). */
static int move_to(struct request *r, struct mount *m, unsigned parent,
		   const char *dir)
{
	struct broker *b = r->b;
	enum { DEPTH = 8 };
	struct mount *p = mount_by_id(&b->g, parent), *aside[DEPTH];
	char src[64], dst[64], *at[DEPTH], *cover = NULL;
	off_t slot[DEPTH];
	/* the caller's target itself, where it is the place: borrowed */
	int to = named_fd(r, p, dir, true), n = 0, err = 0;
	bool own = to < 0;
	while (own &&
	       (err = open_loc(r, p, dir, true, &to, &cover)) == -EAGAIN) {
		struct mount *c = n < DEPTH ? mount_at(&b->g, p, cover) : NULL;
		if (c && handle_awake(b, c) &&   /* a sleeper wakes: expire.c */
		    !(err = intent_aside(b, c, &slot[n])) &&
		    (err = park(b, c)))
			intent_back(b, slot[n]);   /* it never left */
		if (!c || !handle_of(b, c) || err) {
			log_msg(LOG_WARNING, "mount %u: %s is covered", p->id, dir);
			free(cover);
			err = err && err != -EAGAIN ? err : -EIO;
			break;
		}
		fault_step();          /* a kill point: c is in the record */
		aside[n] = c;
		at[n++] = cover;
	}
	if (!err) {
		if (mount(FDPATH(src, handle_of(b, m)->fd), FDPATH(dst, to),
			  NULL, MS_MOVE, NULL) < 0)
			err = -errno;
		if (own)
			close(to);
	}
	while (n-- > 0) {
		if (open_loc(r, p, at[n], true, &to, NULL) == 0) {
			if (mount(FDPATH(src, handle_of(b, aside[n])->fd),
				  FDPATH(dst, to), NULL, MS_MOVE, NULL) < 0)
				err = err ? err : -errno;
			else {
				intent_back(b, slot[n]);
				drop_place(b->park, aside[n]);
			}
			close(to);
		} else {
			log_msg(LOG_WARNING, "mount %u: cannot return to %s",
				   aside[n]->id, at[n]);
			err = err ? err : -EIO;
		}
		free(at[n]);
	}
	return err;
}

/* The caller's new filesystem (newmount.c), held in r->staged until the
 * plan's NEW step moves it into place. */
int stage_new(struct request *r, const char *source, const char *type,
	      unsigned long ms, const char *data)
{
	struct broker *b = r->b;
	char stage[4200];
	int root;
	int err = newmount_make(r, source, type, ms & ~(unsigned long)
				(MS_REMOUNT | MS_BIND | MS_MOVE | MS_REC),
				data);
	if (err)
		return err;
	snprintf(stage, sizeof stage, "%s/.t", b->newroot);
	if ((r->staged = open(stage, O_PATH | O_CLOEXEC)) < 0) {
		err = -errno;
		umount2(stage, MNT_DETACH);
	} else if (fd_stat_kid(r->staged, &r->staged_st, &r->staged_kid,
			       &root) < 0) {
		err = -errno;
		unstage(r);
	}
	return err;
}

/* Drops a staged mount the plan did not take. */
void unstage(struct request *r)
{
	char at[64];
	if (r->staged < 0)
		return;
	umount2(FDPATH(at, r->staged), MNT_DETACH);
	close(r->staged);
	r->staged = -1;
}

/* NEW and BIND: a BIND straight on its place where copy.c can; else
 * made at a staging place (NEW: by stage_new()), held, then moved into
 * place. */
static int make(struct request *r, const struct step *s, struct mount *m)
{
	struct broker *b = r->b;
	char stage[4200], src[64];
	int err = 0, from = -1, fd = -1;
	if (s->kind == STEP_BIND && s->parent &&
	    (err = copy_bind(r, s)) != -EAGAIN)
		return err;
	if ((err = intent_flush(b)))   /* the record, before the staging */
		return err;
	if (s->kind == STEP_NEW) {
		fd = r->staged;
		r->staged = -1;
		if (fd < 0)
			return -EIO;
	} else if (!(err = place_path(b, b->stage, m->file, stage,
				      sizeof stage, m->seq)) &&
		   !(err = open_loc(r, mount_by_id(&b->g, s->src), m->root,
				    false, &from, NULL))) {
		if (mount(FDPATH(src, from), stage, NULL, MS_BIND, NULL) < 0 ||
		    (fd = open(stage, O_PATH | O_CLOEXEC)) < 0)
			err = -errno;
		if (fd < 0 && !err)
			umount2(stage, MNT_DETACH);
		close(from);
	}
	/* a NEW's status and mount id as stage_new() read them */
	if (!err && (err = s->kind == STEP_NEW && r->staged_kid >= 0 ?
		     handle_set(b, m, fd, r->staged_kid, &r->staged_st) :
		     handle_add(b, m, fd)) < 0) {
		umount2(FDPATH(src, fd), MNT_DETACH);
		close(fd);
	} else if (!err && (intent_step(b, s, 'S', handle_of(b, m)),
			    err = s->parent ? move_to(r, m, s->parent, s->dir) :
			    ns_place(r->b, m)) < 0) {  /* a namespace's root */
		umount2(FDPATH(src, fd), MNT_DETACH);
		handle_drop(b, handle_of(b, m));
	}
	if (s->kind == STEP_BIND)  /* the mount has moved away, or is gone */
		drop_place(b->stage, m);
	return err;
}

static int park(struct broker *b, struct mount *m)
{
	char where[4200], src[64];
	int err = place_path(b, b->park, m->file, where, sizeof where, m->seq);
	if (!err && mount(FDPATH(src, handle_of(b, m)->fd), where, NULL,
			  MS_MOVE, NULL) < 0)
		err = -errno;
	return err;
}

static int remount(struct broker *b, struct mount *m, unsigned long flags,
		   const char *data)
{
	char at[64];
	return mount(NULL, FDPATH(at, handle_of(b, m)->fd), NULL, flags,
		     data) < 0 ? -errno : 0;
}

/* The per-mount flags of m, as mount(2) flags, for MS_REMOUNT|MS_BIND. */
static unsigned long ms_of(const struct mount *m)
{
	return flags_ms(&mnt_flag_table, m->flags);
}

/* One step of the open plan, in the kernel. */
int exec_step(struct request *r, const struct step *s)
{
	struct broker *b = r->b;
	struct mount *m = mount_by_id(&b->g, s->mnt);
	char at[64];
	if (!m || (s->kind != STEP_NEW && s->kind != STEP_BIND &&
		   !(s->expire ? handle_known(b, m) : handle_of(b, m)))) {
		log_msg(LOG_WARNING, "step %s: mount %u out of reach",
			   step_name(s->kind), s->mnt);
		return -EIO;
	}
	switch (s->kind) {
	case STEP_NEW:
	case STEP_BIND:
		return make(r, s, m);
	case STEP_MOVE:            /* perhaps from where a PARK left it,
				      which stays until the plan is over */
		return move_to(r, m, s->parent, s->dir);
	case STEP_PARK:
		return park(b, m);
	case STEP_UMOUNT:
		if (s->expire)     /* the kernel's second MNT_EXPIRE */
			return expiry_step(r, m);
		return umount2(FDPATH(at, handle_of(b, m)->fd), MNT_DETACH) < 0 ?
		       -errno : 0;
	case STEP_REMOUNT:
		return remount(b, m, s->flags, s->flags & MS_BIND ? NULL :
			       r->data);
	case STEP_REMOUNT_RO:  /* the superblock only: the mount keeps its */
		return remount(b, m, MS_REMOUNT | MS_RDONLY, NULL) ?:
		       remount(b, m, MS_REMOUNT | MS_BIND | ms_of(m), NULL);
	}
	return -EINVAL;
}

/* The plan is over, kept or undone: the places its PARK steps took go
 * (not at the MOVE back: undoing that MOVE needs the place again). */
void exec_drop_parks(struct broker *b)
{
	for (size_t i = 0; i < b->g.nsteps; i++) {
		const struct step *s = &b->g.steps[i];
		struct mount *m = mount_by_id(&b->g, s->mnt);
		if (s->kind == STEP_PARK && m)
			drop_place(b->park, m);
	}
}
