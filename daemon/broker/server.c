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
#include "admin.h"
#include "broker.h"
#include "libshare_proto.h"
#include "libshare_wire.h"
#include "sock.h"

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
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
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

/* One request on a connection that has one to read.  The credentials are
 * those of the process that connected, read at accept. */
static void serve(struct broker *b, int fd, const struct ucred *cred)
{
	char *msg = malloc(LS_REQUEST_MAX + 1);
	struct request r = { .b = b, .staged = -1,
			     .caller = { .root = -1, .cwd = -1 } };
	struct answer a = { .pass = -1 };
	struct ls_req_view q;
	char *f[LS_NFIELDS] = { 0 };
	ssize_t n = msg ? recv(fd, msg, LS_REQUEST_MAX + 1,
			       MSG_TRUNC | MSG_DONTWAIT) : -1;
	if (n <= 0) {
		free(msg);             /* gone before it asked */
		return;
	}
	if (ls_req_decode(msg, (size_t)n, &q) < 0 || fields(&q, f) < 0) {
		log_msg(LOG_WARNING, "pid %d: malformed request (%zd bytes)",
			(int)cred->pid, n);
		reply(fd, LS_OP_NONE, EINVAL, NULL, 0, -1);
	} else {
		int err = peer_identify(&r.caller, fd, cred, (pid_t)q.tid,
					q.fd1);
		if (!err)
			err = mntns_check(q.op, cred->pid);
		if (!err)
			err = policy_serve(&r, q.op, q.arg, f, &a);
		log_request(q.op, cred->pid, r.caller.root, err);
		if (!reply(fd, q.op, err, a.text, a.ntext, a.pass))
			log_msg(LOG_WARNING, "pid %d gave up waiting for its "
				"%s, or died: %s", (int)cred->pid,
				ls_op_name(q.op), err == -ESRCH ?
				"it was gone before it was served, nothing done" :
				err ? strerror(-err) : "it was done");
		peer_close(&r.caller);
	}
	if (a.pass >= 0)
		close(a.pass);
	free(a.text);
	free(r.busy_kids);
	for (int i = 0; i < LS_NFIELDS; i++)
		free(f[i]);
	free(msg);
}

/* Connections that have not sent their request yet.  They wait in poll(),
 * never in the broker's way: a client that sends nothing holds only its
 * own slot, for at most IDLE seconds, and the oldest one gives way when
 * all MAXCLIENTS slots are taken. */
enum { MAXCLIENTS = 128, IDLE = 10 };

struct client {
	int fd;
	struct ucred cred;
	time_t since;
};

static void drop(struct client *c, size_t *n, size_t i)
{
	close(c[i].fd);
	c[i] = c[--*n];
}

static void take(int lfd, struct client *c, size_t *n)
{
	socklen_t cl = sizeof c->cred;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	if (*n == MAXCLIENTS) {
		size_t oldest = 0;
		for (size_t i = 1; i < *n; i++)
			if (c[i].since < c[oldest].since)
				oldest = i;
		drop(c, n, oldest);
	}
	c[*n].fd = fd;
	c[*n].since = time(NULL);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c[*n].cred, &cl) < 0) {
		close(fd);
		return;
	}
	++*n;
}

void server_loop(struct broker *b)
{
	struct client c[MAXCLIENTS];
	struct pollfd p[MAXCLIENTS + 3];
	size_t n = 0, k;
	while (!b->stop) {
		admin_tick(b);         /* SIGHUP, SIGUSR1: between requests */
		ns_tick(b);            /* namespaces nobody is in any more */
		p[0] = (struct pollfd){ .fd = b->listen_fd, .events = POLLIN };
		for (size_t i = 0; i < n; i++)
			p[i + 1] = (struct pollfd){ .fd = c[i].fd, .events = POLLIN };
		k = tab_loop_fds(b, p + n + 1);
		if (poll(p, n + 1 + k, 1000) < 0)
			continue;      /* EINTR: a signal, maybe SIGTERM */
		tab_loop_events(b, p + n + 1, k);
		time_t now = time(NULL);
		for (size_t i = n; i-- > 0; )   /* back to front: drop() swaps */
			if (p[i + 1].revents) {
				serve(b, c[i].fd, &c[i].cred);
				drop(c, &n, i);
			} else if (now - c[i].since > IDLE) {
				drop(c, &n, i);
			}
		if (p[0].revents & POLLIN)
			take(b->listen_fd, c, &n);
	}
	while (n > 0)
		drop(c, &n, 0);
}
