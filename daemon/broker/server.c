/* server.c: the socket.  One request per connection (libshare_proto.h);
 * the caller's identity is read once, at accept, from the kernel.
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

static void remember_root(struct broker *b)
{
	char proc[64], path[4200];
	struct jail *j;
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", b->peer->root);
	ssize_t n = readlink(proc, path, sizeof path - 1);
	if (n <= 1)
		return;                /* "/": the host, not a jail */
	path[n] = '\0';
	HASH_FIND_STR(b->jails, path, j);
	if (j || !(j = calloc(1, sizeof *j)) || !(j->path = strdup(path))) {
		free(j && !j->path ? j : NULL);
		return;
	}
	HASH_ADD_KEYPTR(hh, b->jails, j->path, strlen(j->path), j);
}

/* The fields of a decoded request as strings (NULL when absent). */
static int fields(const struct ls_req_view *q, char *f[LS_NFIELDS])
{
	for (int i = 0; i < LS_NFIELDS; i++)
		if (q->field[i] && !(f[i] = strndup(q->field[i], q->len[i])))
			return -ENOMEM;
	return 0;
}

static int jails_text(struct broker *b, char *out, size_t size)
{
	size_t n = 0;
	for (struct jail *j = b->jails; j; j = j->hh.next)
		n += (size_t)snprintf(out + n, n < size ? size - n : 0, "%s\n",
				      j->path);
	return n < size ? (int)n : (int)size - 1;
}

/* Whether the caller's root is the host's: no jail. */
static bool on_host(struct broker *b)
{
	struct loc l;
	char *buf;
	bool ok = fd_loc(b, b->peer->root, &l, &buf) == 0;
	if (ok) {
		ok = l.m == b->ns->root && strcmp(l.dir, l.m->root) == 0;
		free(buf);
	}
	return ok;
}

/* Whether the caller may administer the broker: privileged, on the host. */
static bool admin(struct broker *b)
{
	return b->peer->cap_admin && on_host(b);
}

static int dispatch(struct broker *b, const struct ls_request *r,
		    char *f[LS_NFIELDS], char *text, int *ntext, int *fd)
{
	switch (r->op) {
	case LS_OP_MOUNT:
		return call_mount(b, f[0], f[1], f[2], f[3], r->arg);
	case LS_OP_UMOUNT:
		return call_umount(b, f[1], (int)r->arg);
	case LS_OP_PIVOT_ROOT: {
		bool cwd_too = false;
		int err = call_pivot_root(b, f[0], f[1], fd, &cwd_too);
		if (!err && cwd_too)
			*ntext = snprintf(text, LS_REPLY_MAX, "cwd");
		return err;
	}
	case LS_OP_CHROOT:
		return 0;              /* the root is remembered already */
	case LS_OP_STATUS:
		*ntext = snprintf(text, LS_REPLY_MAX - 64,
				  "sharebrokerd %d: %u mounts, %u jails\n",
				  (int)getpid(), b->ns->count,
				  HASH_COUNT(b->jails));
		return 0;
	case LS_OP_STOP:
		if (!admin(b))
			return -EPERM;
		b->stop = true;
		return 0;
	case LS_OP_JAILS:
		*ntext = jails_text(b, text, LS_REPLY_MAX - 64);
		return 0;
	case LS_OP_TREE:
		return show_tree(b, f[1], fd);
	case LS_OP_GRAPH:              /* host paths: not for a jail's eyes */
		return on_host(b) ? show_graph(b, fd) : -EPERM;
	case LS_OP_MOUNTTABLE:
		return show_table(b, f[1], fd);
	}
	return -EINVAL;
}

/* The answer; a descriptor (pivot_root's new root, the file of a tree or
 * graph) rides along. */
static void reply(int fd, uint16_t op, int err, const char *text, int n,
		  int pass)
{
	struct ls_rep_view a = { op, err < 0 ? -err : err, text, (uint32_t)n,
				 pass };
	struct ls_rep_out o;
	if (ls_rep_encode(&o, &a) < 0)
		return;        /* no client would take it: it sees a hang-up */
	while (sendmsg(fd, &o.mh, MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
}

/* One request on a connection that has one to read.  The credentials are
 * those of the process that connected, read at accept. */
static void serve(struct broker *b, int fd, const struct ucred *cred)
{
	static char msg[LS_REQUEST_MAX + 1], text[LS_REPLY_MAX];
	struct peer peer;
	struct ls_req_view q;
	char *f[LS_NFIELDS] = { 0 };
	int ntext = 0, err, pass = -1;
	ssize_t n = recv(fd, msg, sizeof msg, MSG_TRUNC | MSG_DONTWAIT);
	const struct ls_request *r = (const void *)msg;
	if (n <= 0)
		return;                /* gone before it asked */
	if (ls_req_decode(msg, (size_t)n, &q) < 0 || fields(&q, f) < 0) {
		log_msg(LOG_WARNING, "pid %d: malformed request (%zd bytes)",
			   (int)cred->pid, n);
		reply(fd, 0, EINVAL, NULL, 0, -1);
		goto out;
	}
	if ((err = peer_identify(&peer, fd, cred->pid, (pid_t)r->tid,
				 cred->uid, cred->gid)) < 0) {
		log_request(r->op, cred->pid, -1, err);
		reply(fd, r->op, err, NULL, 0, -1);
		goto out;
	}
	b->peer = &peer;
	remember_root(b);
	if (table_changed(b) && sync_table(b) > 0) {
		log_msg(LOG_WARNING, "mounts changed behind the broker's back: "
			   "the graph follows the kernel");
		state_save(b);
	}
	if (!(err = mntns_check(r->op, cred->pid)))
		err = dispatch(b, r, f, text, &ntext, &pass);
	table_changed(b);          /* the broker's own changes */
	log_request(r->op, cred->pid, peer.root, err);
	reply(fd, r->op, err, text, ntext, pass);
	if (pass >= 0)
		close(pass);
	b->peer = NULL;
	peer_close(&peer);
out:
	for (int i = 0; i < LS_NFIELDS; i++)
		free(f[i]);
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
	static struct client c[MAXCLIENTS];
	static struct pollfd p[MAXCLIENTS + 1];
	size_t n = 0;
	while (!b->stop) {
		admin_tick(b);         /* SIGHUP, SIGUSR1: between requests */
		p[0] = (struct pollfd){ .fd = b->listen_fd, .events = POLLIN };
		for (size_t i = 0; i < n; i++)
			p[i + 1] = (struct pollfd){ .fd = c[i].fd, .events = POLLIN };
		if (poll(p, n + 1, 1000) < 0)
			continue;      /* EINTR: a signal, maybe SIGTERM */
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
