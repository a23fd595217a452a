/* conn.c: one round trip to the broker (libshare_proto.h): connect, check
 * that the peer is root, send one request, read one reply, close.
 *
 * A connection per call, never a kept descriptor: nothing for closefrom()
 * or close_range() to take away, nothing shared across fork(), no number
 * to collide with the program's own (preload-pitfalls.md 0.5, 2.21).
 * Everything goes through raw system calls, on the stack: no errno
 * touched, no malloc (vfork children, fork in threaded programs), no lock,
 * and no cancellation point inside what the program sees as mount(2),
 * which is none either.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include "shim.h"

/* Under AT_SECURE (setuid and setgid programs, file capabilities) the
 * environment belongs to the unprivileged caller: it must not choose which
 * broker a privileged program trusts, nor make it bypass the broker. */
static int secure(void)
{
	int saved = errno;   /* getauxval() sets it when the entry is missing */
	int sec = getauxval(AT_SECURE) != 0;
	errno = saved;
	return sec;
}

static const char *env(const char *name)
{
	return secure() ? NULL : getenv(name);
}

int shim_fallback_native(void)
{
	const char *s = env("LIBSHARE_FALLBACK");
	return s && strcmp(s, "native") == 0;
}

/* The broker's address: "@name" is the abstract "\0name", anything else a
 * filesystem path.  Returns its length, or 0 when it does not fit. */
static socklen_t address(struct sockaddr_un *sa)
{
	const char *name = env(LS_SOCKET_ENV);
	size_t n;
	if (!name || !*name)
		name = LS_SOCKET_DEFAULT;
	n = strnlen(name, sizeof sa->sun_path + 1);
	sa->sun_family = AF_UNIX;
	if (name[0] == '@') {
		if (n > sizeof sa->sun_path)
			return 0;
		sa->sun_path[0] = '\0';
		memmove(sa->sun_path + 1, name + 1, n - 1);
		return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	}
	if (n >= sizeof sa->sun_path)
		return 0;
	memmove(sa->sun_path, name, n + 1);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
}

/* A connected socket, or -1 when there is no broker to trust.  The peer
 * must be root: anyone can bind an abstract name (or a path in a writable
 * directory) first, and a squatter would read our paths and answer
 * whatever it likes. */
static int broker_connect(void)
{
	struct sockaddr_un sa;
	struct ucred cred = { .uid = (uid_t)-1 };
	socklen_t clen = sizeof cred;
	socklen_t alen = address(&sa);
	long fd, r;
	if (!alen)
		return -1;
	fd = shim_raw(SYS_socket, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
		      0, 0, 0);
	if (fd < 0)
		return -1;
	do
		r = shim_raw(SYS_connect, fd, (long)&sa, alen, 0, 0, 0);
	while (r == -EINTR);
	if (r == 0)
		r = shim_raw(SYS_getsockopt, fd, SOL_SOCKET, SO_PEERCRED,
			     (long)&cred, (long)&clen, 0);
	if (r == 0 && clen == sizeof cred && cred.uid == 0)
		return (int)fd;
	shim_raw(SYS_close, fd, 0, 0, 0, 0, 0);
	return -1;
}

/* The header and the present fields, gathered without copying: a
 * SOCK_SEQPACKET message goes whole or not at all. */
static int send_request(int fd, const struct shim_req *q)
{
	struct ls_request h = { LS_MAGIC, LS_VERSION, q->op, q->arg, { 0 },
				(uint32_t)shim_raw(SYS_gettid, 0, 0, 0, 0, 0, 0),
				0 };
	struct iovec v[1 + LS_NFIELDS];
	struct msghdr mh = { .msg_iov = v };
	size_t total = sizeof h;
	long r;
	v[mh.msg_iovlen++] = (struct iovec){ &h, sizeof h };
	for (int i = 0; i < LS_NFIELDS; i++) {
		h.len[i] = q->field[i] ? q->len[i] : LS_ABSENT;
		if (!q->field[i] || !q->len[i])
			continue;
		v[mh.msg_iovlen++] = (struct iovec){ (void *)q->field[i],
						     q->len[i] };
		total += q->len[i];
	}
	do
		r = shim_raw(SYS_sendmsg, fd, (long)&mh, MSG_NOSIGNAL, 0, 0, 0);
	while (r == -EINTR);
	return r == (long)total ? 0 : -1;
}

/* The reply's errno, checked against what we asked: a reply that is not
 * one (short, foreign, the wrong op, a length that does not add up, an
 * errno out of range) fails the call with EIO rather than be believed.
 * Its text lands in a->text (cut to fit: MSG_TRUNC tells the real length),
 * a descriptor that rides along (pivot_root's new root) in a->fd, and is
 * closed when the caller wants none. */
static int recv_reply(int fd, uint16_t op, struct shim_ans *a)
{
	struct ls_reply r;
	char spare[1];
	union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr al; } c;
	struct iovec v[2] = { { &r, sizeof r },
			      { a ? a->text : spare, a ? sizeof a->text - 1 : 0 } };
	struct msghdr mh = { .msg_iov = v, .msg_iovlen = 2,
			     .msg_control = c.buf, .msg_controllen = sizeof c.buf };
	long n;
	int passed = -1;
	do
		n = shim_raw(SYS_recvmsg, fd, (long)&mh,
			     MSG_TRUNC | MSG_CMSG_CLOEXEC, 0, 0, 0);
	while (n == -EINTR);
	for (struct cmsghdr *cm = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; cm;
	     cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&passed, CMSG_DATA(cm), sizeof passed);
	if (a) {
		size_t t = n > (long)sizeof r ? (size_t)n - sizeof r : 0;
		a->text[t < sizeof a->text ? t : sizeof a->text - 1] = '\0';
		a->fd = passed;
	} else if (passed >= 0) {
		shim_raw(SYS_close, passed, 0, 0, 0, 0, 0);
	}
	if (n <= 0)
		return SHIM_NOBROKER;  /* hung up without an answer */
	if ((size_t)n < sizeof r || r.magic != LS_MAGIC ||
	    r.version != LS_VERSION || r.op != op ||
	    (size_t)n - sizeof r != r.len || r.error < 0 || r.error >= 4096)
		return -EIO;
	return -r.error;
}

int shim_call_ans(const struct shim_req *q, struct shim_ans *a)
{
	int fd = broker_connect(), ret;
	if (a)
		a->fd = -1;
	if (fd < 0)
		return SHIM_NOBROKER;
	ret = send_request(fd, q) ? SHIM_NOBROKER : recv_reply(fd, q->op, a);
	shim_raw(SYS_close, fd, 0, 0, 0, 0, 0);
	return ret;
}

int shim_call(const struct shim_req *q)
{
	return shim_call_ans(q, NULL);
}
