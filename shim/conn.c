/* conn.c: a round trip to the broker (libshare_proto.h): send one request
 * on a connection to a broker that is root, read one reply.  The bytes on
 * the wire, and the address, are the codec's (libshare_wire.h).
 *
 * The connection lasts: each process keeps up to SLOTS of them, one per
 * call in flight, so that most calls cost a message each way and not a
 * connect as well.  What could go wrong with a kept descriptor, and what
 * happens instead (preload-pitfalls.md 0.5, 2.15-2.21):
 *   - fork, vfork, clone: a slot belongs to the process that filled it,
 *     and no other ever sends on it, nor writes to it (a vfork child
 *     shares the memory); a child uses the slots its parent left empty,
 *     or a connection for the call alone.  Exec closes them (CLOEXEC).
 *   - threads and signal handlers: a slot is claimed with an atomic flag,
 *     never a lock; a call that finds all of them taken connects for
 *     itself, as every call did before.  One request is in flight per
 *     connection, so no reply can be another's.
 *   - the program closed the descriptor (closefrom, close_range) or put
 *     one of its own at its number (dup2): before each use the slot's
 *     descriptor must still be a socket whose peer is the broker it
 *     reached (SO_PEERCRED as at connect); else the slot is forgotten
 *     without touching the descriptor, which is the program's now.
 *   - setuid, exec of a set-user-ID program, chroot, setns: each message
 *     carries the sender's pid and effective ids (SCM_CREDENTIALS, which
 *     the kernel checks), and the broker reads root, cwd and capabilities
 *     again for each request.
 *   - a broker that closed a connection it had kept idle, or restarted:
 *     the send fails, or the reply is ECONNRESET (the request was never
 *     read: the kernel says so when a socket closes with messages
 *     unread); the request goes again, once, on a new connection.  A
 *     hang-up after the request was read is the broker's death, as before.
 *   - a reply that did not come (timeout) or was malformed: that
 *     connection is closed, never kept with an answer still due.
 *   - descriptor numbers: a kept connection waits at SHIM_CONN_FD or
 *     above, out of the way of programs that expect their lowest numbers
 *     free (a daemon that closed 0 to 2 and opens /dev/null three times);
 *     where it cannot go there, it is not kept.
 * Everything goes through raw system calls, on the stack: no errno
 * touched, no malloc (vfork children, fork in threaded programs), no lock,
 * and no cancellation point inside what the program sees as mount(2),
 * which is none either.
 */
#include <fcntl.h>
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

int shim_fallback_native(void)
{
	const char *s = env("LIBSHARE_FALLBACK");
	return s && strcmp(s, "native") == 0;
}

static void sys_close(long fd)
{
	shim_raw(SYS_close, fd, 0, 0, 0, 0, 0);
}

/* The broker a connection reached: its address and SO_PEERCRED. */
struct end {
	struct sockaddr_un sa;
	socklen_t alen;
	struct ucred peer;
};

static struct ucred peer_of(long fd)
{
	struct ucred cred = { .pid = 0, .uid = (uid_t)-1 };
	socklen_t clen = sizeof cred;
	if (shim_raw(SYS_getsockopt, fd, SOL_SOCKET, SO_PEERCRED, (long)&cred,
		     (long)&clen, 0) < 0 || clen != sizeof cred)
		cred.uid = (uid_t)-1;
	return cred;
}

/* A connected socket, or -1 when there is no broker to trust.  The peer
 * must be root: anyone can bind an abstract name (or a path in a writable
 * directory) first, and a squatter would read our paths and answer
 * whatever it likes. */
static int broker_connect(struct end *e)
{
	long fd, r;
	fd = shim_raw(SYS_socket, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
		      0, 0, 0);
	if (fd < 0)
		return -1;
	do
		r = shim_raw(SYS_connect, fd, (long)&e->sa, e->alen, 0, 0, 0);
	while (r == -EINTR);
	if (r == 0 && (e->peer = peer_of(fd)).uid == 0)
		return (int)fd;
	sys_close(fd);
	return -1;
}

/* ---- the slots ------------------------------------------------------- */

enum { SLOTS = 4 };
static struct slot {
	int busy;              /* claimed by a call: atomic */
	int pid;               /* the process that filled it; 0: never */
	int fd;                /* -1: empty */
	long timeout;          /* its SO_RCVTIMEO, ms (0: for ever) */
	struct end end;
} slots[SLOTS] = { { .fd = -1 }, { .fd = -1 }, { .fd = -1 }, { .fd = -1 } };

/* A slot of this process's (or one no process filled), claimed; NULL
 * when every one is taken.  Nothing is written to a slot of another
 * process's: this may be its vfork child. */
static struct slot *claim(int pid)
{
	for (int i = 0; i < SLOTS; i++) {
		struct slot *s = &slots[i];
		int owner = __atomic_load_n(&s->pid, __ATOMIC_ACQUIRE);
		if ((owner == pid || owner == 0) &&
		    !__atomic_exchange_n(&s->busy, 1, __ATOMIC_ACQUIRE)) {
			if (__atomic_load_n(&s->pid, __ATOMIC_RELAXED) == pid)
				return s;
			if (s->pid == 0) {     /* never filled: ours now */
				s->fd = -1;
				__atomic_store_n(&s->pid, pid, __ATOMIC_RELEASE);
				return s;
			}
			__atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
		}
	}
	return NULL;
}

static void release(struct slot *s)
{
	if (s)
		__atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
}

/* Whether s's descriptor is still the connection it made to a broker:
 * its peer as at connect, and no other slot of this process holding that
 * number (a program that closed it under one slot, where another then
 * connected). */
static int still_ours(const struct slot *s)
{
	for (int i = 0; i < SLOTS; i++)
		if (&slots[i] != s && slots[i].pid == s->pid &&
		    __atomic_load_n(&slots[i].fd, __ATOMIC_RELAXED) == s->fd)
			return 0;
	struct ucred now = peer_of(s->fd);
	return now.uid == 0 && now.pid == s->end.peer.pid &&
	       now.gid == s->end.peer.gid;
}

/* ---- one round trip --------------------------------------------------- */

/* An answer that did not come back, from a broker that never read the
 * request: it may go again on a new connection.  Positive, like
 * SHIM_NOBROKER. */
#define RETRY 2

/* Waits for the reply for t ms (0: for ever) until deadline; a signal
 * restarts the wait, not the clock.  *tmo: the SO_RCVTIMEO the socket
 * has (0, for ever, on a new one), set only when it must change. */
static long recv_until(int fd, struct msghdr *mh, long t, long deadline,
		       long *tmo)
{
	long n;
	for (;;) {
		if (t != *tmo) {
			struct timeval tv = { t / 1000, t % 1000 * 1000 };
			shim_raw(SYS_setsockopt, fd, SOL_SOCKET, SO_RCVTIMEO,
				 (long)&tv, sizeof tv, 0);
			*tmo = t;
		}
		n = shim_raw(SYS_recvmsg, fd, (long)mh, LS_REP_RECV_FLAGS, 0,
			     0, 0);
		if (n != -EINTR && !(n == -EAGAIN && deadline))
			return n;
		if (deadline && (t = deadline - now_ms()) <= 0)
			return -ETIMEDOUT;
	}
}

/* The ids of 32 bits, where the ABI also has calls of 16 (i386, arm). */
#ifdef SYS_geteuid32
#define SYS_EUID SYS_geteuid32
#define SYS_EGID SYS_getegid32
#else
#define SYS_EUID SYS_geteuid
#define SYS_EGID SYS_getegid
#endif

/* The request, from the calling thread, with its sender's pid and
 * effective ids: 0, RETRY when it could not be sent, -EINVAL for one the
 * codec refuses (the broker would), -EFAULT for a field the kernel could
 * not read. */
static int send_request(int fd, const struct ls_req_view *q, int pid)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(struct ucred))];
	} ctl;
	struct ucred me = {
		(pid_t)pid, (uid_t)shim_raw(SYS_EUID, 0, 0, 0, 0, 0, 0),
		(gid_t)shim_raw(SYS_EGID, 0, 0, 0, 0, 0, 0) };
	struct ls_req_view t = *q;
	struct ls_req_out o;
	long r;
	t.tid = (uint32_t)shim_raw(SYS_gettid, 0, 0, 0, 0, 0, 0);
	t.fd1 = (uint32_t)fd + 1;
	if (ls_req_encode(&o, &t) < 0)
		return -EINVAL;
	memset(&ctl, 0, sizeof ctl);
	o.mh.msg_control = ctl.buf;
	o.mh.msg_controllen = sizeof ctl.buf;
	struct cmsghdr *h = CMSG_FIRSTHDR(&o.mh);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_CREDENTIALS;
	h->cmsg_len = CMSG_LEN(sizeof me);
	memcpy(CMSG_DATA(h), &me, sizeof me);
	do
		r = shim_raw(SYS_sendmsg, fd, (long)&o.mh, MSG_NOSIGNAL, 0, 0, 0);
	while (r == -EINTR);
	/* EFAULT: a caller's field unmapped since it was measured */
	if (r == -EFAULT)
		return -EFAULT;
	return r == (long)o.size ? 0 : RETRY;
}

/* The reply's errno, checked by the codec against what we asked: a reply
 * that is not one fails the call with EIO rather than be believed.  Its
 * text lands in a->text (cut to fit), the one descriptor that may ride
 * along (pivot_root's new root, a mount table) in a->fd; every other
 * descriptor that came, and that one when the caller wants none, is
 * closed here, never left open in the program. */
static int recv_reply(int fd, uint16_t op, struct shim_ans *a,
		      const long when[2], long *tmo, int *done)
{
	struct ls_rep_in in;
	struct ls_rep_view rep;
	char spare[1];
	long n;
	int ret, keep;
	ls_rep_expect(&in, a ? a->text : spare, a ? sizeof a->text - 1 : 0);
	n = recv_until(fd, &in.mh, when[0], when[1], tmo);
	/* n <= 0: it hung up without an answer, no broker after all;
	 * ECONNRESET: it closed the connection with the request unread */
	ret = n > 0 ? ls_rep_decode(&in, (size_t)n, op, &rep) :
	      n == -ETIMEDOUT ? -ETIMEDOUT : n == -ECONNRESET ? RETRY :
	      SHIM_NOBROKER;
	*done = ret == 0;
	keep = ret == 0 && a ? rep.fd : -1;
	for (int i = 0; i < in.nfd; i++)
		if (in.fds[i] != keep)
			sys_close(in.fds[i]);
	if (a) {
		a->text[ret == 0 ? rep.len : 0] = '\0';
		a->fd = keep;
	}
	return ret == 0 ? -rep.error : ret;
}

/* One request of process pid and its reply on fd, waiting when[0] ms
 * until when[1]; *done: a reply came whole, nothing is left due on fd. */
static int exchange(int fd, const struct ls_req_view *q, int pid,
		    struct shim_ans *a, const long when[2], long *tmo,
		    int *done)
{
	int ret = send_request(fd, q, pid);
	*done = ret == -EINVAL || ret == -EFAULT;   /* nothing was sent */
	if (ret != 0)
		return ret;
	return recv_reply(fd, q->op, a, when, tmo, done);
}

/* The slot's connection when it is still the one it made to the broker
 * at e's address; else the slot is emptied, closing a connection to
 * another address, never a descriptor that may be the program's now. */
static int kept_fd(struct slot *s, const struct end *e)
{
	if (!s || s->fd < 0)
		return -1;
	if (!still_ours(s)) {
		s->fd = -1;
		return -1;
	}
	if (s->end.alen != e->alen || memcmp(&s->end.sa, &e->sa, e->alen)) {
		sys_close(s->fd);
		s->fd = -1;
	}
	return s->fd;
}

/* A new connection, or -1; *keep: it waits at SHIM_CONN_FD or above
 * (CLOEXEC), to be kept, where want asks for one to keep. */
static int fresh(struct end *e, int want, int *keep)
{
	int fd = broker_connect(e);
	long up;
	*keep = 0;
	if (fd < 0 || !want)
		return fd;
	up = shim_raw(SYS_fcntl, fd, F_DUPFD_CLOEXEC, SHIM_CONN_FD, 0, 0, 0);
	if (up < 0)
		return fd;             /* for this call alone */
	sys_close(fd);
	*keep = 1;
	return (int)up;
}

int shim_call_ans(const struct ls_req_view *q, struct shim_ans *a)
{
	long t = timeout_ms(), when[2] = { t, t ? now_ms() + t : 0 }, tmo = 0;
	int pid = (int)shim_raw(SYS_getpid, 0, 0, 0, 0, 0, 0);
	struct slot *s = claim(pid);
	struct end e;
	int fd, ret = RETRY, done = 0, keep;
	if (a)
		a->fd = -1;
	if (ls_address(ls_socket_name(env(LS_SOCKET_ENV)), &e.sa, &e.alen) < 0)
		ret = SHIM_NOBROKER;   /* an address no broker can have */
	else if ((fd = kept_fd(s, &e)) >= 0)
		ret = exchange(fd, q, pid, a, when, &s->timeout, &done);
	if (s && s->fd >= 0 && !done) {
		sys_close(s->fd);      /* the broker left it, or an answer
					  may still be due on it */
		s->fd = -1;
	}
	if (ret == RETRY && (fd = fresh(&e, s != NULL, &keep)) >= 0) {
		ret = exchange(fd, q, pid, a, when, &tmo, &done);
		if (keep && done) {
			s->end = e;
			s->timeout = tmo;
			s->fd = fd;
		} else {
			sys_close(fd);
		}
	}
	release(s);
	return ret == RETRY ? SHIM_NOBROKER : ret;
}

int shim_call(const struct ls_req_view *q)
{
	return shim_call_ans(q, NULL);
}
