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
#include "door/server.h"
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

/* The fields of a decoded request as strings (NULL when absent). */
static int fields(const struct ls_req_view *q, char *f[LS_NFIELDS])
{
	for (int i = 0; i < LS_NFIELDS; i++)
		if (q->field[i] && !(f[i] = strndup(q->field[i], q->len[i])))
			return -ENOMEM;
	return 0;
}

/* What the request needs of the graph, under its lock (server_lock()),
 * which held says is taken already; who asks is read before, outside. */
static int decide(struct request *r, struct client *c,
		  const struct ls_req_view *q, char *f[LS_NFIELDS],
		  struct answer *a, bool held)
{
	int err;
	if (!held)
		server_lock();
	paths_keep(r->b);                 /* until the answer (paths.c) */
	fault_caller(r->caller.pid);
	err = policy_serve(r, q->op, q->arg, f, a);
	paths_drop(r->b);
	if (err == -EINPROGRESS && !held && !server_park(c))
		err = -EAGAIN;
	if (!held)
		server_unlock();
	return err;
}

int server_handle(struct broker *b, struct client *c, bool held)
{
	struct request r = { .b = b, .staged = -1,
			     .caller = { .root = -1, .cwd = -1, .proc = -1 } };
	struct answer a = { .pass = -1 };
	const struct ucred *cred = &c->from;
	struct ls_req_view q;
	char *f[LS_NFIELDS] = { 0 };
	int err = 0;
	if (ls_req_decode(c->msg, c->n, &q) < 0 || fields(&q, f) < 0) {
		log_msg(LOG_WARNING, "pid %d: malformed request (%zu bytes)",
			(int)cred->pid, c->n);
		reply(c->fd, LS_OP_NONE, EINVAL, NULL, 0, -1);
		err = MALFORMED;
	} else {
		phase_begin();
		err = peer_identify(&r.caller, c->fd, cred, (pid_t)q.tid,
				    q.fd1, &c->seen);
		if (!err)
			err = mntns_check(q.op, cred->pid, r.caller.proc);
		if (!err)
			peer_root(&r.caller);  /* read here, not in the lock */
		phase(PHASE_RESOLVE);  /* the policy's checks count there */
		if (!err)
			err = decide(&r, c, &q, f, &a, held);
		if (err != -EINPROGRESS) {
			log_request(q.op, cred->pid, r.caller.root, err);
			if (!reply(c->fd, q.op, err, a.text, a.ntext, a.pass))
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
	return err == -EINPROGRESS || err == MALFORMED ? err : 0;
}

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

bool server_take(struct client *c)
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

/* A new connection, into *c. */
bool server_accept(int lfd, struct client *c)
{
	socklen_t cl = sizeof c->cred;
	int one = 1;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return false;
	*c = (struct client){ .fd = fd, .since = time(NULL),
			      .seen = PEER_SEEN_NONE };
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &cl) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one) < 0) {
		close(fd);
		return false;
	}
	return true;
}

/* The connection to close for a new one when all slots are taken: the
 * one quiet longest of those with no request waiting (closing one that has
 * a request would make its client send it again), else the one quiet
 * longest. */
size_t server_quietest(const struct client *c, size_t n)
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
