/* conn.c: one round trip to the broker (libshare_proto.h): connect, check
 * that the peer is root, send one request, read one reply, close.  The
 * bytes on the wire, and the address, are the codec's (libshare_wire.h).
 *
 * A connection per call, never a kept descriptor: nothing for closefrom()
 * or close_range() to take away, nothing shared across fork(), no number
 * to collide with the program's own (preload-pitfalls.md 0.5, 2.21).
 * Everything goes through raw system calls, on the stack: no errno
 * touched, no malloc (vfork children, fork in threaded programs), no lock,
 * and no cancellation point inside what the program sees as mount(2),
 * which is none either.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
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

/* How long a call waits for the broker's answer: LIBSHARE_TIMEOUT
 * seconds (0: for ever), SHIM_TIMEOUT by default.  A broker stuck on one
 * mount (a FUSE server that never answers) must not hang every program
 * that asks it something; the call fails with ETIMEDOUT instead. */
static long timeout_ms(void)
{
	const char *s = env("LIBSHARE_TIMEOUT");
	char *end;
	long t = s && *s ? strtol(s, &end, 10) : -1;
	if (t < 0 || *end || t > 24 * 3600)
		t = SHIM_TIMEOUT;
	return t * 1000;
}

static long now_ms(void)
{
	struct timespec ts = { 0, 0 };
	shim_raw(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0, 0, 0, 0);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for the reply until deadline (ms, 0: none); a signal restarts the
 * wait, not the clock. */
static long recv_until(int fd, struct msghdr *mh, long deadline)
{
	long n;
	do {
		if (deadline) {
			long left = deadline - now_ms();
			struct timeval tv = { left / 1000, left % 1000 * 1000 };
			if (left <= 0)
				return -ETIMEDOUT;
			shim_raw(SYS_setsockopt, fd, SOL_SOCKET, SO_RCVTIMEO,
				 (long)&tv, sizeof tv, 0);
		}
		n = shim_raw(SYS_recvmsg, fd, (long)mh, LS_REP_RECV_FLAGS, 0,
			     0, 0);
	} while (n == -EINTR || (n == -EAGAIN && deadline));
	return n;
}

int shim_fallback_native(void)
{
	const char *s = env("LIBSHARE_FALLBACK");
	return s && strcmp(s, "native") == 0;
}

/* A connected socket, or -1 when there is no broker to trust.  The peer
 * must be root: anyone can bind an abstract name (or a path in a writable
 * directory) first, and a squatter would read our paths and answer
 * whatever it likes. */
static int broker_connect(void)
{
	struct sockaddr_un sa;
	struct ucred cred = { .uid = (uid_t)-1 };
	socklen_t clen = sizeof cred, alen;
	long fd, r;
	if (ls_address(ls_socket_name(env(LS_SOCKET_ENV)), &sa, &alen) < 0)
		return -1;      /* an address no broker can have */
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

/* The request, from the calling thread: 0, SHIM_NOBROKER when it could
 * not be sent, -EINVAL for one the codec refuses (the broker would),
 * -EFAULT for a field the kernel could not read. */
static int send_request(int fd, const struct ls_req_view *q)
{
	struct ls_req_view t = *q;
	struct ls_req_out o;
	long r;
	t.tid = (uint32_t)shim_raw(SYS_gettid, 0, 0, 0, 0, 0, 0);
	t.fd1 = (uint32_t)fd + 1;
	if (ls_req_encode(&o, &t) < 0)
		return -EINVAL;
	do
		r = shim_raw(SYS_sendmsg, fd, (long)&o.mh, MSG_NOSIGNAL, 0, 0, 0);
	while (r == -EINTR);
	/* EFAULT: a caller's field unmapped since it was measured */
	if (r == -EFAULT)
		return -EFAULT;
	return r == (long)o.size ? 0 : SHIM_NOBROKER;
}

/* The reply's errno, checked by the codec against what we asked: a reply
 * that is not one fails the call with EIO rather than be believed.  Its
 * text lands in a->text (cut to fit), the one descriptor that may ride
 * along (pivot_root's new root, a mount table) in a->fd; every other
 * descriptor that came, and that one when the caller wants none, is
 * closed here, never left open in the program. */
static int recv_reply(int fd, uint16_t op, struct shim_ans *a, long deadline)
{
	struct ls_rep_in in;
	struct ls_rep_view rep;
	char spare[1];
	long n;
	int ret, keep;
	ls_rep_expect(&in, a ? a->text : spare, a ? sizeof a->text - 1 : 0);
	n = recv_until(fd, &in.mh, deadline);
	/* n <= 0: it hung up without an answer, no broker after all */
	ret = n > 0 ? ls_rep_decode(&in, (size_t)n, op, &rep) :
	      n == -ETIMEDOUT ? -ETIMEDOUT : SHIM_NOBROKER;
	keep = ret == 0 && a ? rep.fd : -1;
	for (int i = 0; i < in.nfd; i++)
		if (in.fds[i] != keep)
			shim_raw(SYS_close, in.fds[i], 0, 0, 0, 0, 0);
	if (a) {
		a->text[ret == 0 ? rep.len : 0] = '\0';
		a->fd = keep;
	}
	return ret == 0 ? -rep.error : ret;
}

int shim_call_ans(const struct ls_req_view *q, struct shim_ans *a)
{
	long t = timeout_ms();
	long deadline = t ? now_ms() + t : 0;
	int fd = broker_connect(), ret;
	if (a)
		a->fd = -1;
	if (fd < 0)
		return SHIM_NOBROKER;
	ret = send_request(fd, q);
	if (ret == 0)
		ret = recv_reply(fd, q->op, a, deadline);
	shim_raw(SYS_close, fd, 0, 0, 0, 0, 0);
	return ret;
}

int shim_call(const struct ls_req_view *q)
{
	return shim_call_ans(q, NULL);
}
