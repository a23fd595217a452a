/* admin.h: the daemon's own room (daemon/broker/main/): sharebrokerd.c
 * sets every room up and runs the server loop; its configuration
 * (config.h), its pidfile and lock (pidfile.h) and its signals (here,
 * signals.c), whose work the loop does between two requests.
 *
 * The top room: it may call every other, and none calls it. */
#ifndef LS_ADMIN_H
#define LS_ADMIN_H

#include <sys/types.h>

struct broker;

/* SIGTERM and SIGINT stop the server loop; SIGHUP calls reload(b),
 * SIGUSR1 writes the mount tree to the log and SIGCHLD has the holder
 * looked at (holder_check()), all between two requests (admin_tick),
 * never inside one. */
void signals_init(struct broker *b, void (*reload)(struct broker *));
/* What the signals since the last call asked for; server_loop is handed it
 * and calls it each time round. */
void admin_tick(struct broker *b);

#endif
