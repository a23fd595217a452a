/* door.h: the front door (daemon/broker/door/): the socket (server.c,
 * sock.c), callers of another mount namespace turned away (mntns.c), what
 * each caller may ask (policy.c), the system calls it forwards, each
 * planned and carried out as one request (request.c), and what sharectl
 * is shown (show.c, reply.c).
 *
 * May call every room below it: the namespaces (ns/), the served tables
 * (tab/), the executor (exec/), persistence (persist/), resolution
 * (resolve/), the hold (hold/) and the ground (base/).
 */
#ifndef LS_DOOR_H
#define LS_DOOR_H

#include "broker.h"

/* server.c */
int server_listen(const char *addr);
/* threads: how many serve the connections (loop.c; 0: one per processor,
 * at most 4); tick(b): the daemon's own work, between two requests
 * (signals.c) */
void server_loop(struct broker *b, unsigned threads,
		 void (*tick)(struct broker *b));

/* mntns.c: the broker's own mount namespace, read once at start.
 * Without /proc/self/ns/mnt (a kernel without mount namespaces) every
 * caller is taken as sharing it. */
void mntns_init(void);
/* 0 when pid is in the broker's mount namespace, or op needs none (status);
 * -EXDEV, and a log line saying why, when it is not: the broker's mounts
 * are not in its namespace and its own never reach the broker's. */
int mntns_check(unsigned op, pid_t pid, int proc); /* proc: /proc/<pid> */

/* policy.c */
struct answer {                /* what a request answers besides its errno */
	char *text;            /* malloc'ed, ntext bytes */
	int ntext;
	int pass;              /* a descriptor to hand over, or -1 */
};
int policy_serve(struct request *r, uint16_t op, uint64_t arg,
		 char *f[LS_NFIELDS], struct answer *a);

/* request.c */
int call_mount(struct request *r, const char *source, const char *target,
	       const char *type, const char *data, unsigned long ms);
int call_umount(struct request *r, const char *target, int flags);
int call_pivot_root(struct request *r, const char *new_root,
		    const char *put_old, int *newroot, bool *cwd_too);

/* show.c */
int show_table(struct request *r, const char *which, const char *pid,
	       int *pass);
int show_tree(struct request *r, const char *pid, const char *dir, int *pass);
int show_graph(struct request *r, int *pass);

/* reply.c */
int reply_init(void);
int reply_text(uid_t uid, const char *text, size_t len, int *pass);

#endif
