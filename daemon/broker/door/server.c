/* server.c: the socket.  A connection carries requests one after the
 * other, each answered before the next is read (libshare_proto.h); the
 * shim keeps one per process.  Who sent a request is the kernel's to say:
 * the credentials each message comes with (SCM_CREDENTIALS, which the
 * kernel checks: a process can claim only its own pid and uids), else
 * those of the connect (SO_PEERCRED); identity.c proves the process once
 * per connection and reads again what can change.  What it may ask is
 * policy.c's to say.
 *
 * Bad input (short, long, wrong magic or version, field lengths that do
 * not add up, a NUL inside a field) is answered EINVAL and closes that
 * connection; nothing a client sends or fails to send stops the broker.
 * A connection that goes quiet waits in poll() and is closed after a
 * while; one closed with a request unread makes its client see
 * ECONNRESET, which tells it that nothing was done (conn.c sends it again
 * on a new connection).
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
#include "hold/hold.h"
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

/* handle()'s answer for bytes that were no request. */
enum { MALFORMED = 1 };

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
 * once the lookup ends; MALFORMED when it was no request at all (answered
 * EINVAL, and the connection is to be closed).  cred: what the request came
 * with; seen: what the connection has shown of its callers. */
static int handle(struct broker *b, int fd, const struct ucred *cred,
		  struct peer_seen *seen, const char *msg, size_t n)
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
		err = MALFORMED;
	} else {
		phase_begin();
		paths_keep(b);         /* until the answer (paths.c) */
		fault_caller(cred->pid);
		err = peer_identify(&r.caller, fd, cred, (pid_t)q.tid, q.fd1,
				    seen);
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
		paths_drop(b);
	}
	if (a.pass >= 0)
		close(a.pass);
	free(a.text);
	free(r.busy_kids);
	for (int i = 0; i < LS_NFIELDS; i++)
		free(f[i]);
	return err == -EINPROGRESS || err == MALFORMED ? err : 0;
}

/* Connections, in poll() between their requests: a client that sends
 * nothing holds only its own slot, for at most IDLE seconds, and the one
 * quiet longest gives way when all MAXCLIENTS slots are taken.  Requests
 * parked on a stalled filesystem (slow.c) keep their connection and
 * message; MAXPARKED of them, then the next gets EAGAIN. */
enum { MAXCLIENTS = 128, IDLE = 10, MAXPARKED = 64, BATCH = 16 };

struct client {
	int fd;
	struct ucred cred;     /* of the connect: SO_PEERCRED */
	struct ucred from;     /* of the request in msg */
	struct peer_seen seen;
	time_t since;          /* its last request, or the connect */
	char *msg;             /* the request read, or a parked one */
	size_t n;
};

/* The credentials a message came with, and any descriptor closed: a
 * request carries none. */
static void take_cmsgs(struct msghdr *mh, struct client *c)
{
	c->from = c->cred;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(mh); h; h = CMSG_NXTHDR(mh, h)) {
		if (h->cmsg_level != SOL_SOCKET)
			continue;
		if (h->cmsg_type == SCM_CREDENTIALS &&
		    h->cmsg_len == CMSG_LEN(sizeof c->from)) {
			struct ucred u;
			memcpy(&u, CMSG_DATA(h), sizeof u);
			if (u.pid > 0)   /* 0: sent before SO_PASSCRED */
				c->from = u;
		} else if (h->cmsg_type == SCM_RIGHTS) {
			int *fd = (int *)CMSG_DATA(h);
			size_t k = (h->cmsg_len - CMSG_LEN(0)) / sizeof *fd;
			for (size_t i = 0; i < k; i++)
				close(fd[i]);
		}
	}
}

/* The request waiting on c's connection, read into c->msg; false when
 * the caller hung up, or (c->n 0) has sent nothing yet. */
static bool take_request(struct client *c)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(struct ucred))];
	} ctl;
	char *msg = malloc(LS_REQUEST_MAX + 1);
	struct iovec v = { msg, LS_REQUEST_MAX + 1 };
	struct msghdr mh = { .msg_iov = &v, .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof ctl.buf };
	ssize_t got = msg ? recvmsg(c->fd, &mh, MSG_TRUNC | MSG_DONTWAIT |
				    MSG_CMSG_CLOEXEC) : -1;
	if (got <= 0) {
		c->n = got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ?
		       0 : 1;
		free(msg);
		return false;
	}
	take_cmsgs(&mh, c);
	c->msg = msg;
	c->n = (size_t)got;
	return true;
}

static void drop(struct client *c, size_t *n, size_t i)
{
	close(c[i].fd);
	free(c[i].msg);
	peer_seen_forget(&c[i].seen);
	c[i] = c[--*n];
}

/* The connection to close for a new one when all slots are taken: the
 * one quiet longest of those with no request waiting (closing one that has
 * a request would make its client send it again), else the one quiet
 * longest. */
static size_t victim(const struct client *c, size_t n)
{
	size_t oldest = 0, idle = n;
	char b;
	for (size_t i = 0; i < n; i++) {
		if (c[i].since < c[oldest].since)
			oldest = i;
		if ((idle == n || c[i].since < c[idle].since) &&
		    recv(c[i].fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) < 0 &&
		    errno == EAGAIN)
			idle = i;
	}
	return idle < n ? idle : oldest;
}

/* A new connection, in c[*n - 1] when true. */
static bool take(int lfd, struct client *c, size_t *n)
{
	socklen_t cl = sizeof c->cred;
	int one = 1;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return false;
	if (*n == MAXCLIENTS)
		drop(c, n, victim(c, *n));
	c[*n] = (struct client){ .fd = fd, .since = time(NULL),
				 .seen = PEER_SEEN_NONE };
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c[*n].cred, &cl) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one) < 0) {
		close(fd);
		return false;
	}
	++*n;
	return true;
}

/* c's request served; c is ready for the next. */
static void served(struct client *c)
{
	free(c->msg);
	c->msg = NULL;
	c->since = time(NULL);
}

/* A connection with a request to read: served, or parked; one whose
 * request has not come yet stays, and so does one served. */
static void serve(struct broker *b, struct client *c, size_t *n, size_t i,
		  struct client *park, size_t *np)
{
	struct client *cl = &c[i];
	if (!take_request(cl)) {
		if (cl->n)             /* hung up */
			drop(c, n, i);
		return;
	}
	int err = handle(b, cl->fd, &cl->from, &cl->seen, cl->msg, cl->n);
	if (err == MALFORMED) {
		drop(c, n, i);
		return;
	}
	if (err != -EINPROGRESS) {
		served(cl);
		return;
	}
	if (*np < MAXPARKED) {
		park[(*np)++] = *cl;
		c[i] = c[--*n];
		return;
	}
	log_msg(LOG_WARNING, "pid %d: %d requests already wait for stalled "
		"filesystems: EAGAIN", (int)cl->from.pid, MAXPARKED);
	reply(cl->fd, LS_OP_NONE, EAGAIN, NULL, 0, -1);
	served(cl);
}

/* A lookup ended: the parked requests are served again, and their
 * connections go back among the others (c, where there is room); those
 * gone are dropped. */
static void unpark(struct broker *b, struct client *park, size_t *np,
		   const struct pollfd *p, bool woken, struct client *c,
		   size_t *n)
{
	if (woken)
		slow_retrying(true);
	for (size_t i = *np; i-- > 0; ) {
		struct client *cl = &park[i];
		if (p[i].revents & (POLLHUP | POLLERR)) {
			log_msg(LOG_WARNING, "pid %d gave up waiting for a "
				"stalled filesystem, or died: nothing done",
				(int)cl->from.pid);
			drop(park, np, i);
		} else if (woken && handle(b, cl->fd, &cl->from, &cl->seen,
					   cl->msg, cl->n) != -EINPROGRESS) {
			served(cl);
			if (*n == MAXCLIENTS) {
				drop(park, np, i);
				continue;
			}
			c[(*n)++] = *cl;
			park[i] = park[--*np];
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
		size_t polled = n;     /* those unparked come after them */
		unpark(b, park, &np, p + 2, p[1].revents & POLLIN, c, &n);
		time_t now = time(NULL);
		for (size_t i = polled; i-- > 0; )  /* back to front: drop()
						       swaps */
			if (p[at + i].revents)
				serve(b, c, &n, i, park, &np);
			else if (now - c[i].since > IDLE)
				drop(c, &n, i);
		/* a first request mostly comes with the connection:
		 * served at once, not after another round of poll(); with
		 * many callers, up to BATCH of them before the others' turn */
		for (int i = 0; i < BATCH && p[0].revents & POLLIN &&
		     take(b->listen_fd, c, &n); i++)
			serve(b, c, &n, n - 1, park, &np);
	}
	while (n > 0)
		drop(c, &n, 0);
	while (np > 0)
		drop(park, &np, 0);
}
