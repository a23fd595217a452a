/* resolve.h: the resolution room (daemon/broker/resolve/): who the caller
 * is, from the kernel alone (identity.c, holds.c), and what its paths
 * name: a walk from its root or cwd by its own rules (resolve.c), a plain
 * path in one lookup (quickwalk.c), and lookups in filesystems whose
 * server may never answer, handed to a thread (slow.c).
 *
 * May call the hold (hold/: a descriptor's place in the graph) and the
 * ground (base/).
 */
#ifndef LS_RESOLVE_H
#define LS_RESOLVE_H

#include "broker.h"

/* holds.c */
/* The inode of the other end of the connected AF_UNIX socket sock; 0
 * when the kernel cannot tell (before Linux 3.3). */
ino_t peer_inode(int sock);
/* Whether the process of /proc directory proc holds the socket inode ino
 * at its descriptor fd1 - 1, or (fd1 0) among its first descriptors. */
bool peer_holds(int proc, ino_t ino, uint32_t fd1);

/* identity.c */
struct ucred;
/* What a connection has shown of its callers (server.c keeps one per
 * connection): the inode of its other end, and the last process proved
 * to hold that end, by its /proc directory. */
struct peer_seen {
	bool asked;            /* end read (0: the kernel cannot tell) */
	ino_t end;
	pid_t pid;
	int proc;              /* -1: none */
};
#define PEER_SEEN_NONE ((struct peer_seen){ .proc = -1 })
void peer_seen_forget(struct peer_seen *s);   /* the process, not end */
int peer_identify(struct peer *p, int sock, const struct ucred *cred,
		  pid_t tid, uint32_t fd1, struct peer_seen *seen);
void peer_close(struct peer *p);
int peer_cwd(struct peer *p);           /* opened at its first use, or -1 */
const char *peer_root(struct peer *p);  /* where its root is now, or NULL */
void peer_creds(struct peer *p);        /* uid, gid and groups read */
uid_t peer_uid(struct peer *p);

/* resolve.c */
/* RES_MOUNTPOINT: umount2(MNT_EXPIRE)'s target, whose last name, when
 * it is a sleeping mount (expire.c), is read from the graph, not looked
 * up: the lookup would clear the mount's mark. */
enum { RES_FOLLOW = 0, RES_NOFOLLOW = 1, RES_MOUNTPOINT = 2 };
int resolve(struct request *r, const char *path, int how, struct named *out);
/* quickwalk.c: a plain path in one lookup; 1: not plain, walk it */
int quick_walk(struct request *r, const char *path, int how,
	       struct named *out);

/* slow.c: lookups in filesystems whose server may never answer */
bool fs_may_stall(const struct fs *fs);
bool stall_anywhere(struct broker *b);  /* on some mount of the graph */
int slow_openat(int dir, const char *name); /* O_PATH|O_NOFOLLOW; or
					       -EINPROGRESS: park */
int slow_wake_fd(void);        /* readable when a lookup has ended */
void slow_retrying(bool on);   /* parked requests are served again */
void slow_forget(void);        /* none is parked: forget the answers */

#endif
