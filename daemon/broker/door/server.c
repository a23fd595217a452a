/* server.c: the socket.  One request per connection (libshare_proto.h);
 * the caller's identity is read once, at accept, from the kernel; what it
 * may ask is policy.c's to say.
 *
 * Bad input (short, long, wrong magic or version, field lengths that do
 * not add up, a NUL inside a field) is answered EINVAL and closes that
 * connection; nothing a client sends or fails to send stops the broker.
 * A client that goes quiet waits in poll() and is dropped after a while.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <poll.h>
#include <sys/time.h>
#include <time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>
#include "broker.h"
#include "base/base.h"
#include "base/log.h"
#include "door/door.h"
#include "door/sock.h"
#include "ns/ns.h"
#include "resolve/resolve.h"
#include "tab/tab.h"
#include "libshare_proto.h"
#include "libshare_wire.h"

int server_listen(const char *addr)
{
	struct sockaddr_un sa;
	socklen_t len = sock_address(addr, &sa);
	int fd, live;
	if (!len)
		return -EINVAL;
	if (addr[0] != '@') {      /* a stale path goes, a live one stays */
		if ((live = sock_connect(addr)) >= 0) {
			close(live);
			return -EADDRINUSE;
		}
		unlink(addr);
	}
	/* non-blocking: server_loop() accepts until none is waiting */
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, len) < 0 || listen(fd, 64) < 0 ||
	    (addr[0] != '@' && chmod(addr, 0666) < 0)) {
		int err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* The answer; a descriptor (pivot_root's new root, the file of a tree or
 * graph) rides along.  False when the caller is gone: it gave up waiting
 * (the shim's LIBSHARE_TIMEOUT) or died. */
static bool reply(int fd, uint16_t op, int err, const char *text, int n,
		  int pass)
{
	struct ls_rep_view a = { op, err < 0 ? -err : err, text, (uint32_t)n,
				 pass };
	struct ls_rep_out o;
	ssize_t sent;
	if (ls_rep_encode(&o, &a) < 0)
		return true;   /* no client would take it: it sees a hang-up */
	while ((sent = sendmsg(fd, &o.mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	return sent >= 0;
}

/* The fields of a decoded request as strings (NULL when absent). */
static int fields(const struct ls_req_view *q, char *f[LS_NFIELDS])
{
	for (int i = 0; i < LS_NFIELDS; i++)
		if (q->field[i] && !(f[i] = strndup(q->field[i], q->len[i])))
			return -ENOMEM;
	return 0;
}

/* One request, read from fd: answered, or -EINPROGRESS when a lookup in
 * a stalled filesystem keeps it waiting (slow.c): then nothing is
 * answered and nothing was done, and it is served again from the start
 * once the lookup ends.  The credentials are those of the process that
 * connected, read at accept. */
static int handle(struct broker *b, int fd, const struct ucred *cred,
		  const char *msg, size_t n)
{
	struct request r = { .b = b, .staged = -1,
			     .caller = { .root = -1, .cwd = -1, .proc = -1 } };
	struct answer a = { .pass = -1 };
	struct ls_req_view q;
	char *f[LS_NFIELDS] = { 0 };
	int err = 0;
	if (ls_req_decode(msg, n, &q) < 0 || fields(&q, f) < 0) {
		log_msg(LOG_WARNING, "pid %d: malformed request (%zu bytes)",
			(int)cred->pid, n);
		reply(fd, LS_OP_NONE, EINVAL, NULL, 0, -1);
	} else {
		phase_begin();
		fault_caller(cred->pid);
		err = peer_identify(&r.caller, fd, cred, (pid_t)q.tid, q.fd1);
		if (!err)
			err = mntns_check(q.op, cred->pid, r.caller.proc);
		phase(PHASE_RESOLVE);  /* the policy's checks count there */
		if (!err)
			err = policy_serve(&r, q.op, q.arg, f, &a);
		if (err != -EINPROGRESS) {
			log_request(q.op, cred->pid, r.caller.root, err);
			if (!reply(fd, q.op, err, a.text, a.ntext, a.pass))
				log_msg(LOG_WARNING, "pid %d gave up waiting "
					"for its %s, or died: %s",
					(int)cred->pid, ls_op_name(q.op),
					err == -ESRCH ? "it was gone before "
					"it was served, nothing done" : err ?
					strerror(-err) : "it was done");
		}
		peer_close(&r.caller);
	}
	if (a.pass >= 0)
		close(a.pass);
	free(a.text);
	free(r.busy_kids);
	for (int i = 0; i < LS_NFIELDS; i++)
		free(f[i]);
	return err == -EINPROGRESS ? err : 0;
}

/* The request waiting on fd, read; NULL when the caller went first, or
 * (*n 0) when it has not sent it yet. */
static char *take_request(int fd, size_t *n)
{
	char *msg = malloc(LS_REQUEST_MAX + 1);
	ssize_t got = msg ? recv(fd, msg, LS_REQUEST_MAX + 1,
				 MSG_TRUNC | MSG_DONTWAIT) : -1;
	*n = got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : 1;
	if (got <= 0) {
		free(msg);
		return NULL;
	}
	*n = (size_t)got;
	return msg;
}

/* Connections that have not sent their request yet.  They wait in poll(),
 * never in the broker's way: a client that sends nothing holds only its
 * own slot, for at most IDLE seconds, and the oldest one gives way when
 * all MAXCLIENTS slots are taken.  Requests parked on a stalled
 * filesystem (slow.c) keep their connection and message; MAXPARKED of
 * them, then the next gets EAGAIN. */
enum { MAXCLIENTS = 128, IDLE = 10, MAXPARKED = 64, BATCH = 16 };

struct client {
	int fd;
	struct ucred cred;
	time_t since;
	char *msg;             /* a parked request */
	size_t n;
};

static void drop(struct client *c, size_t *n, size_t i)
{
	close(c[i].fd);
	free(c[i].msg);
	c[i] = c[--*n];
}

/* A new connection, in c[*n - 1] when true. */
static bool take(int lfd, struct client *c, size_t *n)
{
	socklen_t cl = sizeof c->cred;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return false;
	if (*n == MAXCLIENTS) {
		size_t oldest = 0;
		for (size_t i = 1; i < *n; i++)
			if (c[i].since < c[oldest].since)
				oldest = i;
		drop(c, n, oldest);
	}
	c[*n] = (struct client){ .fd = fd, .since = time(NULL) };
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c[*n].cred, &cl) < 0) {
		close(fd);
		return false;
	}
	++*n;
	return true;
}

/* A connection with a request to read: served, or parked; one whose
 * request has not come yet stays. */
static void serve(struct broker *b, struct client *c, size_t *n, size_t i,
		  struct client *park, size_t *np)
{
	struct client *cl = &c[i];
	if (!(cl->msg = take_request(cl->fd, &cl->n)) && !cl->n)
		return;
	if (cl->msg &&
	    handle(b, cl->fd, &cl->cred, cl->msg, cl->n) == -EINPROGRESS) {
		if (*np < MAXPARKED) {
			park[(*np)++] = *cl;
			c[i] = c[--*n];
			return;
		}
		log_msg(LOG_WARNING, "pid %d: %d requests already wait for "
			"stalled filesystems: EAGAIN", (int)cl->cred.pid,
			MAXPARKED);
		reply(cl->fd, LS_OP_NONE, EAGAIN, NULL, 0, -1);
	}
	drop(c, n, i);
}

/* A lookup ended: the parked requests are served again; those gone are
 * dropped. */
static void unpark(struct broker *b, struct client *park, size_t *np,
		   const struct pollfd *p, bool woken)
{
	if (woken)
		slow_retrying(true);
	for (size_t i = *np; i-- > 0; ) {
		struct client *cl = &park[i];
		if (p[i].revents & (POLLHUP | POLLERR)) {
			log_msg(LOG_WARNING, "pid %d gave up waiting for a "
				"stalled filesystem, or died: nothing done",
				(int)cl->cred.pid);
			drop(park, np, i);
		} else if (woken && handle(b, cl->fd, &cl->cred, cl->msg,
					   cl->n) != -EINPROGRESS) {
			drop(park, np, i);
		}
	}
	if (woken)
		slow_retrying(false);
	if (*np == 0)
		slow_forget();
}

void server_loop(struct broker *b, void (*tick)(struct broker *b))
{
	struct client c[MAXCLIENTS], park[MAXPARKED];
	struct pollfd p[MAXCLIENTS + MAXPARKED + 5];
	size_t n = 0, np = 0, k;
	int wake = slow_wake_fd();
	while (!b->stop) {
		tick(b);               /* SIGHUP, SIGUSR1: between requests */
		ns_tick(b);            /* namespaces nobody is in any more */
		p[0] = (struct pollfd){ .fd = b->listen_fd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = wake, .events = POLLIN };
		for (size_t i = 0; i < np; i++)
			p[i + 2] = (struct pollfd){ .fd = park[i].fd };
		for (size_t i = 0; i < n; i++)
			p[np + 2 + i] = (struct pollfd){ .fd = c[i].fd,
							 .events = POLLIN };
		size_t at = np + 2;    /* where the clients are in p */
		k = tab_loop_fds(b, p + at + n);
		/* a token's last close: ns_tick() at once (nslife.c) */
		p[at + n + k] = (struct pollfd){ .fd = ns_wake_fd(),
						 .events = POLLIN };
		if (poll(p, at + n + k + 1, 1000) < 0)
			continue;      /* EINTR: a signal, maybe SIGTERM */
		tab_loop_events(b, p + at + n, k);
		unpark(b, park, &np, p + 2, p[1].revents & POLLIN);
		time_t now = time(NULL);
		for (size_t i = n; i-- > 0; )   /* back to front: drop() swaps */
			if (p[at + i].revents)
				serve(b, c, &n, i, park, &np);
			else if (now - c[i].since > IDLE)
				drop(c, &n, i);
		/* the request mostly comes with the connection: served
		 * at once, not after another round of poll(); with many
		 * callers, up to BATCH of them before the others' turn */
		for (int i = 0; i < BATCH && p[0].revents & POLLIN &&
		     take(b->listen_fd, c, &n); i++)
			serve(b, c, &n, n - 1, park, &np);
	}
	while (n > 0)
		drop(c, &n, 0);
	while (np > 0)
		drop(park, &np, 0);
}
