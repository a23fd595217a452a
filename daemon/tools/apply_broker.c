/* apply_broker.c: apply's way to the broker, over the wire with the codec.
 *
 * Why the protocol and not mount(8) under the shim: sharectl then needs no
 * util-linux, no LD_PRELOAD of its own and no child per call; it reads the
 * broker's table (LS_OP_MOUNTTABLE, with the propagation fields the
 * kernel's table lacks) on the same connection type it mounts with, and
 * gets the broker's errno as it is.  It calls as a host process naming host
 * paths, which the broker resolves in its root (the host's): a jail's
 * targets lie inside the jail and its bind sources on the host, which no
 * process chrooted in the jail could name.  (The broker learns a jail's
 * root from the processes that live there, as sharectl jails shows.)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "jailtab.h"
#include "libshare_wire.h"

/* A connection to the broker at addr, or -errno: -EPERM when the peer is
 * not root, a squatter rather than the broker. */
static int connect_broker(const char *addr)
{
	struct sockaddr_un sa;
	struct ucred cred;
	socklen_t len, cl = sizeof cred;
	int fd, err = ls_address(addr, &sa, &len);
	if (err < 0)
		return err;
	if ((fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, len) < 0)
		err = -errno;
	else if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 ||
		 cred.uid != 0)
		err = -EPERM;
	if (err < 0)
		close(fd);
	return err < 0 ? err : fd;
}

/* One round trip with fields f (NULL entries absent).  The reply's text
 * goes to text (*len bytes of room in, bytes received out), its descriptor
 * to *pass (-1 when none).  Returns the reply's errno (0 or positive), or
 * -errno when no root broker answered or the answer was not one. */
int broker_call(const char *addr, unsigned op, const char *const f[4],
		unsigned long arg, char *text, size_t *len, int *pass)
{
	struct ls_req_view q = { .op = (uint16_t)op, .arg = arg };
	struct ls_req_out o;
	struct ls_rep_in in;
	struct ls_rep_view rep = { .fd = -1 };  /* gcc cannot see err guards it */
	ssize_t n = -1;
	int fd, err;
	for (int i = 0; f && i < LS_NFIELDS; i++)
		if ((q.field[i] = f[i]))
			q.len[i] = (uint32_t)strlen(f[i]);
	*pass = -1;
	if ((fd = connect_broker(addr)) < 0)
		return fd;
	q.fd1 = (uint32_t)fd + 1;  /* the broker checks the caller holds it */
	if ((err = ls_req_encode(&o, &q)) < 0) {
		close(fd);
		return err;
	}
	ls_rep_expect(&in, text, *len);
	if (sendmsg(fd, &o.mh, MSG_NOSIGNAL) == (ssize_t)o.size)
		n = recvmsg(fd, &in.mh, LS_REP_RECV_FLAGS);
	close(fd);
	err = n > 0 ? ls_rep_decode(&in, (size_t)n, (uint16_t)op, &rep) : -EIO;
	for (int i = 0; i < in.nfd; i++)
		if (err < 0 || in.fds[i] != rep.fd)
			close(in.fds[i]);
	if (err < 0)
		return err;
	*pass = rep.fd;
	*len = rep.len;
	return rep.error;
}

/* All of the file fd, NUL-terminated, in *text. */
static int slurp(int fd, char **text)
{
	size_t n = 0, cap = 65536;
	char *buf = malloc(cap + 1);
	ssize_t got;
	while (buf && (got = read(fd, buf + n, cap - n)) > 0)
		if ((n += (size_t)got) == cap) {
			char *more = realloc(buf, (cap *= 2) + 1);
			if (!more)
				free(buf);
			buf = more;
		}
	if (!buf || got < 0) {
		free(buf);
		return -ENOMEM;
	}
	buf[n] = '\0';
	*text = buf;
	return 0;
}

/* The broker's mountinfo for sharectl's root, the host's. */
static int broker_table(void *ctx, char **text)
{
	const char *f[4] = { NULL, "mountinfo", NULL, NULL };
	char none[1];
	size_t len = 0;
	int pass, err = broker_call(ctx, LS_OP_MOUNTTABLE, f, 0, none, &len,
				    &pass);
	if (err == 0 && pass < 0)
		err = EIO;
	if (err == 0)
		err = slurp(pass, text);
	if (pass >= 0)
		close(pass);
	return err > 0 ? -err : err;
}

static int broker_mount(void *ctx, const struct jt_entry *e,
			const struct mcall *c)
{
	const char *f[4] = { c->source, c->target, c->type, c->data };
	char none[1];
	size_t len = 0;
	int pass, err = broker_call(ctx, LS_OP_MOUNT, f, c->flags, none, &len,
				    &pass);
	(void)e;
	if (pass >= 0)
		close(pass);
	return err > 0 ? -err : err;
}

/* The backend that changes the broker's graph, at the socket addr. */
int broker_backend(struct backend *b, const char *addr)
{
	*b = (struct backend){ broker_table, broker_mount, NULL,
			       (void *)addr, "" };
	return 0;
}
