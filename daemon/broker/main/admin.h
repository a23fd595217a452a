/* admin.h: what sharebrokerd's administration adds around the server loop:
 * its signals (signals.c) and the mount namespace its callers must share
 * (mntns.c).  Configuration and pidfile: config.h, pidfile.h. */
#ifndef LS_ADMIN_H
#define LS_ADMIN_H

#include <sys/types.h>

struct broker;

/* SIGTERM and SIGINT stop the server loop; SIGHUP calls reload(b) and
 * SIGUSR1 writes the mount tree to the log, both between two requests
 * (admin_tick), never inside one. */
void signals_init(struct broker *b, void (*reload)(struct broker *));
/* What the signals since the last call asked for; server_loop calls it
 * each time round. */
void admin_tick(struct broker *b);

/* The broker's own mount namespace, read once at start.  Without
 * /proc/self/ns/mnt (a kernel without mount namespaces) every caller is
 * taken as sharing it. */
void mntns_init(void);
/* 0 when pid is in the broker's mount namespace, or op needs none (status);
 * -EXDEV, and a log line saying why, when it is not: the broker's mounts
 * are not in its namespace and its own never reach the broker's. */
int mntns_check(unsigned op, pid_t pid, int proc); /* proc: /proc/<pid> */

#endif
