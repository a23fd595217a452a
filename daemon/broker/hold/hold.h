/* hold.h: the hold room (daemon/broker/hold/): the broker's hold on the
 * mounts of its graph.  A handle (an O_PATH descriptor on a mount's root,
 * handle.c) for every mount, found by the graph's mount, the kernel's id
 * or an address; a handle let go for the kernel's expiry mark (expire.c);
 * the import of the host's table and the graph kept in step with it
 * (import.c); a descriptor's place in the graph (named.c); and the holder,
 * which keeps covered mounts within reach across a restart (holder.h).
 *
 * May call the ground (base/) only.  Everything above reaches a mount
 * through here.
 */
#ifndef LS_HOLD_H
#define LS_HOLD_H

#include <errno.h>
#include "broker.h"

/* The executor's hold on one mount of the graph: an O_PATH descriptor on
 * its root.  Through /proc/self/fd/N it reaches the mount even when other
 * mounts cover it (docs/design.md, hidden mounts). */
struct handle {
	uint64_t seq;          /* the engine mount's seq: key of by_seq */
	uint64_t made;         /* when the kernel made the mount, in the
				  order its table lists them (state.c) */
	int fd;
	int kid;               /* the kernel's mount id (fdinfo mnt_id) */
	dev_t dev;             /* its superblock */
	struct mount *m;
	bool asleep;           /* fd -1: let go for the kernel's MNT_EXPIRE
				  mark, which it must not clear (expire.c) */
	int place;             /* asleep: the directory it is mounted in */
	char *name;            /* and its name there, malloc'ed */
	UT_hash_handle hh, hk; /* by_seq, by_kid */
};

struct devref {                /* a superblock the graph holds mounts of */
	dev_t dev;
	struct fs *fs;
	unsigned n;            /* handles on it */
	UT_hash_handle hh;
};

/* handle.c */
struct stat;
int handle_add(struct broker *b, struct mount *m, int fd);
int handle_take(struct broker *b, struct mount *m, int fd, int kid);
int handle_put(struct broker *b, struct mount *m, int fd, int kid, dev_t dev);
int handle_set(struct broker *b, struct mount *m, int fd, int kid,
	       const struct stat *st);
void handle_rekey(struct broker *b);
struct handle *handle_of(const struct broker *b, const struct mount *m);
struct mount *mount_of_kid(const struct broker *b, int kid);
int handle_fd_of_kid(const void *b, int kid);   /* for mntid_known() */
struct mount *mount_at_ptr(const struct broker *b, const void *p);
void handle_drop(struct broker *b, struct handle *h);
struct fs *fs_of_dev(const struct broker *b, dev_t dev);
/* where the kernel has m now, malloc'ed: a namespace's under its root */
char *kernel_path(const struct broker *b, const struct mount *m);
void expiry_forget(struct handle *h);  /* a sleeper's place let go */

/* paths.c: a handle's path read once a request, until a step moves it */
void paths_keep(struct broker *b);     /* a request begins */
void paths_drop(struct broker *b);     /* and ends */
void paths_moved(struct broker *b);    /* by the kernel's table */
void paths_plan(struct broker *b);     /* by the open plan's steps */
char *handle_path(const struct broker *b, const struct handle *h);

/* named.c: a descriptor's place in the graph; _at: with its fd_path()
 * and fd_stat() read; _kid: and its mount id and whether it is on that
 * mount's root, -1 unknown (fd_stat_kid()).  E_DETACHED: the descriptor
 * is on a mount no table holds (MNT_DETACH), where the kernel's
 * lock_mount() answers ENOENT and every other check EINVAL (request.c); a
 * code no lookup gives. */
enum { E_DETACHED = ENOLINK };
int fd_loc(struct broker *b, int fd, struct loc *out, char **dirbuf);
int fd_loc_at(struct broker *b, int fd, const char *path,
	      const struct stat *st, struct loc *out, char **dirbuf);
int fd_loc_kid(struct broker *b, int kid, int root, const char *path,
	       const struct stat *st, struct loc *out, char **dirbuf);
void named_free(struct named *n);
int named_top(struct broker *b, struct named *n, bool expire);
bool names_fresh(const struct broker *b, struct loc at);
bool roots_fresh(const struct broker *b, struct mount *m);

/* expire.c: MNT_EXPIRE with the kernel's own mark (issue 29) */
struct entry;                  /* a mount of the kernel's table */
struct handle *handle_known(const struct broker *b, const struct mount *m);
struct handle *handle_awake(struct broker *b, struct mount *m);
char *sleeper_path(const struct handle *h);
void expiry_load(struct broker *b);
void expiry_loaded(struct broker *b);
int expiry_import(struct broker *b, struct entry *e);
bool expiry_above(struct entry **ix, size_t n, const struct entry *e);
int expiry_mark(struct request *r, struct mount *m);
int expiry_step(struct request *r, struct mount *m);
int expiry_wake_plan(struct request *r);

/* import.c; handle_import(): t, the table e is of (mntid_within()) */
struct table;
int import_table(struct broker *b, const char *mountinfo);
void handle_import(struct broker *b, struct table *t, struct entry *e,
		   bool above);
int refresh_paths(struct broker *b);
int sync_table(struct broker *b);
bool table_changed(struct broker *b);
/* The main thread's own watch (fd, -1: none), taken with the request's
 * (door/loop.c); the one to poll between requests. */
void table_watch_also(int fd);
int table_watch_fd(const struct broker *b);

#endif
