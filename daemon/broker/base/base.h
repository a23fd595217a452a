/* base.h: the ground room (daemon/broker/base/): what the kernel says of a
 * descriptor, a mount id, a superblock and the mount table as text
 * (mtparse.h), the log (log.h), and the crash tests' fault injection.
 *
 * Owns no state of the broker's: every function here takes what it needs
 * and could serve another program (test/legacy/mntid.c links fd.c,
 * mntid.c and mtparse.c alone).  Calls nothing of the broker's but its own
 * room; the engine's types only.
 */
#ifndef LS_BASE_H
#define LS_BASE_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct stat;
struct fs;

/* /proc/self/fd/N of a descriptor, in buf (an array) */
#define FDPATH(buf, fd) (snprintf(buf, sizeof buf, "/proc/self/fd/%d", fd), buf)

/* fd.c: what the kernel says of a descriptor */
char *fd_path(int fd);         /* where it is now, malloc'ed */
bool path_under(const char *path, const char *top);
bool fd_within(int fd, int root);
int fd_stat(int fd, struct stat *st); /* fstat from the cache: never
					 blocks on a stalled server */
/* and, where statx() says them, its mount id and whether it is on that
 * mount's root (each -1 where it cannot: fd_mnt_id(), fd_at_root()) */
int fd_stat_kid(int fd, struct stat *st, int *kid, int *root);
/* the same of dir/name, without opening it, as umount2() finds it */
int name_stat_kid(int dir, const char *name, struct stat *st, int *kid,
		  int *root);
bool fd_at_root(int fd, int kid); /* on mount kid, on its root */
bool kernel_lacks(const char *what);   /* a legacy simulation's hook */
enum { FD_SPARE = 64 };        /* descriptors kept for serving requests */
void fd_raise_limit(void);
int fd_room(void);             /* handles take descriptors below this */
unsigned long sysctl_value(const char *path); /* under /proc/sys, or 0 */

/* mntid.c: the kernel's id of a descriptor's mount */
struct table;
int fd_mnt_id(int fd);
/* the same, where mountinfo must say it, from t (table_read()) while the
 * kernel's table is still t: for many questions of one table */
int mntid_within(struct table *t, int fd);
int fdinfo_mnt_id(const char *fdinfo); /* any process's, by its fdinfo */
bool fdinfo_has_mnt_id(void);          /* Linux 3.15 on */
/* where no file handle or fdinfo says it: from t as above, or (NULL, or
 * t no longer the kernel's) a table read for the question */
int mountinfo_mnt_id(struct table *t, int fd);
bool mountinfo_at_root(int fd, int kid); /* fd_at_root() before 5.8 */
bool kid_mounted(int kid);     /* in the table: not detached */
/* the handles that tell mounts apart: held(ctx, kid), the descriptor the
 * broker holds on mount kid or -1 (the hold registers it) */
void mntid_known(int (*held)(const void *ctx, int kid), const void *ctx);
bool fd_reached(int fd, const char *path); /* on what a walk of path reaches */
/* dir/name opened (O_PATH) if it is the root of mount kid, else -ESTALE
 * or the lookup's -errno; the lookup ends on the top of the stack there,
 * so a mount with anything on its root is never found this way. */
int mount_root_open(int dir, const char *name, int kid);
/* whether dir/name is the root of mount kid, without opening it: 1, or
 * -ESTALE or the lookup's -errno; 0 where statx() cannot say (before
 * Linux 5.8): mount_root_open() then */
int mount_root_at(int dir, const char *name, int kid);

/* fslearn.c: what the kernel says of a superblock */
int fs_learn_kid(struct fs *fs, int kid);
int fs_learn_tail(void);         /* the descriptor it reads on */
void fs_learn(struct fs *fs, dev_t dev, const char *sbopts);

/* fault.c: the crash tests' kill points, and the writes they strike */
int save_put(int fd, const char *text, size_t len, off_t at);
void fault_init(void);
void fault_arm(void);
void fault_caller(pid_t pid);
void fault_step(void);
void fault_copy(void);
void fault_holder(void);
bool fault_compact(void);

#endif
