/* holder.h: the process that keeps the broker's covered mounts within
 * reach across a restart (holder.c, docs/design.md "Restarts"). */
#ifndef LS_HOLDER_H
#define LS_HOLDER_H

#include <stdbool.h>
#include <sys/types.h>

struct broker;

#define HOLDER_NAME "sharebrokerhold"  /* its comm: 15 bytes at most */
#define HOLDER_PIDFILE "holder.pid"    /* "PID FD": FD is the state dir */
#define HOLDER_IDS "holder.ids"        /* "FD KID" a line, without mnt_id */
#define EXPIRY_LIST "expiry"           /* the sleepers (expire.c), if any */

/* Starts the broker's holder, sharing its descriptor table; lock_fd is
 * the state directory's lock, which it lets go last once the broker is
 * gone.  Then the previous broker's holder, if any, ends (holder_adopt():
 * ours keeps what it kept now).  0 or -errno. */
int holder_spawn(struct broker *b, int lock_fd);
/* Ours, or 0: it shares our descriptors, which are no use of a mount. */
pid_t holder_pid(void);
/* Between requests: a holder that ended (killed by hand) is replaced. */
void holder_check(struct broker *b);
/* A final stop (sharectl stop --final): no broker follows, so ours ends
 * now, keeping nothing, and its pid file goes; none starts again. */
void holder_end(struct broker *b);

/* Before the import: the previous broker's holder, if one is left, and
 * the mounts it keeps (said in the log; out of memory, some of them). */
void holder_adopt(struct broker *b);
/* A new O_PATH descriptor on the root of mount kid (superblock dev) from
 * the previous holder, or -1. */
int holder_take(int kid, dev_t dev);
/* Whether pid has ended: no such process, or a zombie (whose descriptors
 * are closed already, the lock with them). */
bool pid_gone(pid_t pid);
/* A handle's descriptor and mount id (-1: dropped), written down where
 * the kernel will not say them to the next broker (holder.c). */
void holder_note(int fd, int kid);

/* The mounts recovery's own moves cover (recmove.c): recover_keep(at)
 * keeps the mount on at before a move covers it; recover_kept() gives a
 * copy (-ENOENT: none), recover_take() hands it over to the import (-1:
 * none), and recover_forget() closes the rest after the import. */
void recover_keep(int at);
int recover_kept(int kid, dev_t dev);
int recover_take(int kid, dev_t dev);
void recover_forget(void);

/* ---- between holder.c and holdproc.c -------------------------------- */

struct held {                  /* an O_PATH descriptor of an old holder */
	int kid, num;          /* kid: -errno when the table cannot tell */
	int noted;             /* the previous broker's word (holder.ids) */
};

struct holder {
	pid_t pid;             /* ours, or 0 */
	int id_fd;             /* the state directory: says whose it is */
	int lock_fd;           /* closed last: the next broker waits on it */
	pid_t broker;
	pid_t old;             /* the previous broker's, while importing */
	int old_fd;            /* its id_fd */
	pid_t stray;           /* one before it, that a crash left alive */
	struct held *v;
	size_t n;
};

/* The holder process's body (clone(2) with CLONE_FILES; arg: the struct
 * holder): it waits for the broker's death, keeps the covered mounts. */
int holder_main(void *arg);
/* The value after key in a /proc text file (octal for "flags:"); -1. */
long proc_field(const char *path, const char *key, int base);

#endif
