/* server.h: between the requests (server.c) and the threads that serve
 * the connections they come on (loop.c). */
#ifndef LS_SERVER_H
#define LS_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <time.h>
#include "broker.h"
#include "resolve/resolve.h"

struct client {                /* a connection */
	int fd;
	struct ucred cred;     /* of the connect: SO_PEERCRED */
	struct ucred from;     /* of the request in msg */
	struct peer_seen seen;
	time_t since;          /* its last request, or the connect */
	char *msg;             /* the request read, or a parked one */
	size_t n;
};

/* server_handle()'s answer for bytes that were no request. */
enum { MALFORMED = 1 };

/* A new connection on the listening socket lfd, into *c. */
bool server_accept(int lfd, struct client *c);
/* The connection of c[0..n) to close for a new one when all slots are
 * taken. */
size_t server_quietest(const struct client *c, size_t n);
/* The request waiting on c's connection, read into c->msg; false when
 * the caller hung up, or (c->n 0) has sent nothing yet. */
bool server_take(struct client *c);
/* c's request, answered: 0; -EINPROGRESS when a lookup in a stalled
 * filesystem keeps it waiting (slow.c): then nothing is answered and
 * nothing was done, and it is served again from the start once the
 * lookup ends; MALFORMED when it was no request at all (answered EINVAL,
 * and the connection is to be closed).  Who asks is read first, outside
 * the graph's lock; what it asks is decided and done under it, taken
 * here unless held says the caller has it. */
int server_handle(struct broker *b, struct client *c, bool held);

/* loop.c: the graph's lock.  Requests are decided, carried out and
 * saved one at a time, as the kernel serializes them (namespace_sem);
 * the daemon's own work between requests takes it too. */
void server_lock(void);
void server_unlock(void);
/* c, whose request waits for a stalled filesystem, kept by the main
 * thread (its fd and message now the main thread's), under the graph's
 * lock; false when MAXPARKED already wait (the request is answered
 * EAGAIN). */
bool server_park(struct client *c);

#endif
