/* libshare_wire.h: the one codec of the wire protocol (libshare_proto.h),
 * compiled into the shim, sharectl, the broker and the test clients, so
 * that what one side sends is what the other side takes.
 *
 * Header-only static functions: the shim builds them with hidden
 * visibility and exports nothing new.  Nothing here does I/O, allocates,
 * locks, prints or touches errno; callers send and receive (the shim with
 * raw system calls, everyone else with libc) in buffers they supply, so the
 * codec is async-signal-safe wherever the shim runs it.  Each side has one
 * error, whatever the fault:
 *
 *   ls_address()       -EINVAL
 *   ls_req_decode()    -EINVAL  what the broker answers a malformed request
 *   ls_rep_decode()    -EIO     what a call fails with on a malformed reply
 *   the encoders       -EINVAL
 *
 * The encoders refuse exactly what the decoders refuse, so a message built
 * here always decodes.  Decoding yields views into the caller's buffer
 * (pointer and length; a NULL pointer for an absent field, a pointer and
 * length 0 for an empty one), never copies.  The message structs point into
 * themselves: fill them where they will be sent from, do not copy them.
 */
#ifndef LS_WIRE_H
#define LS_WIRE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include "libshare_proto.h"

/* The golden bytes of test/unit/wire-test.c, and a 32-bit client talking to
 * a 64-bit broker, depend on these layouts. */
_Static_assert(sizeof(struct ls_request) == 40, "ls_request is 40 bytes");
_Static_assert(sizeof(struct ls_reply) == 16, "ls_reply is 16 bytes");
/* Every field at the same offset whatever the word size: arg is 8-aligned
 * by its place, not by the compiler (i386 aligns a uint64_t to 4). */
_Static_assert(offsetof(struct ls_request, op) == 6, "op at 6");
_Static_assert(offsetof(struct ls_request, arg) == 8, "arg at 8");
_Static_assert(offsetof(struct ls_request, len) == 16, "len at 16");
_Static_assert(offsetof(struct ls_request, tid) == 32, "tid at 32");
_Static_assert(offsetof(struct ls_request, fd1) == 36, "fd1 at 36");
_Static_assert(offsetof(struct ls_reply, error) == 8, "error at 8");
_Static_assert(offsetof(struct ls_reply, len) == 12, "len at 12");

/* ---- the address ------------------------------------------------------ */

/* The longest address, '@' or the leading '/' included: sun_path less one
 * byte, which is a path's NUL or, for "@name", the abstract form's leading
 * NUL that the '@' stands for.  One rule for both forms. */
#define LS_ADDRESS_MAX (sizeof ((struct sockaddr_un *)0)->sun_path - 1)

/* The address a program uses: LIBSHARE_SOCKET or its --socket; unset or
 * empty is the default (an empty variable is how a shell unsets one). */
static inline const char *ls_socket_name(const char *given)
{
	return given && *given ? given : LS_SOCKET_DEFAULT;
}

/* name as a socket address: "@name" abstract, "/path" a filesystem path,
 * 2 to LS_ADDRESS_MAX bytes in all.  Refused: the empty name; a lone "@",
 * since an empty abstract name makes bind() pick a random one; a relative
 * path, since the broker, sharectl and a jailed caller each have their own
 * cwd and would name different sockets; anything longer, rather than cut. */
static inline int ls_address(const char *name, struct sockaddr_un *sa,
			     socklen_t *len)
{
	size_t n = strnlen(name, LS_ADDRESS_MAX + 1);
	if (n < 2 || n > LS_ADDRESS_MAX || (name[0] != '@' && name[0] != '/'))
		return -EINVAL;
	*sa = (struct sockaddr_un){ .sun_family = AF_UNIX };
	memcpy(sa->sun_path, name, n);
	if (name[0] == '@')
		sa->sun_path[0] = '\0';   /* the length ends the name, no NUL */
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
			   (name[0] == '/'));
	return 0;
}

/* ---- the request ------------------------------------------------------ */

/* A request as its fields: the caller's strings to encode, or views into
 * the received message once decoded. */
struct ls_req_view {
	uint16_t op;                     /* enum ls_op, never LS_OP_NONE */
	uint64_t arg;
	uint32_t tid;
	uint32_t fd1;                    /* see struct ls_request */
	const char *field[LS_NFIELDS];   /* NULL: absent */
	uint32_t len[LS_NFIELDS];        /* bytes of each present field */
};

/* A request ready for sendmsg(fd, &mh, MSG_NOSIGNAL): the header and the
 * present fields gathered without a copy, size bytes in all; a
 * SOCK_SEQPACKET message goes whole or not at all. */
struct ls_req_out {
	struct ls_request h;
	struct iovec v[1 + LS_NFIELDS];
	struct msghdr mh;
	size_t size;
};

/* A field the broker can take as a C string: no NUL inside, and no longer
 * than any path or mount data the kernel would accept. */
static inline int ls_field_ok(const char *f, uint32_t len)
{
	return len <= LS_FIELD_MAX && !memchr(f, '\0', len);
}

/* q as a request in o; -EINVAL for one that ls_req_decode() would
 * refuse.  The tid and fd1 are the caller's to fill in. */
static inline int ls_req_encode(struct ls_req_out *o,
				const struct ls_req_view *q)
{
	if (q->op == LS_OP_NONE)
		return -EINVAL;
	o->h = (struct ls_request){ LS_MAGIC, LS_VERSION, q->op, q->arg,
				    { 0 }, q->tid, q->fd1 };
	o->v[0] = (struct iovec){ &o->h, sizeof o->h };
	o->mh = (struct msghdr){ .msg_iov = o->v, .msg_iovlen = 1 };
	o->size = sizeof o->h;
	for (int i = 0; i < LS_NFIELDS; i++) {
		o->h.len[i] = LS_ABSENT;
		if (!q->field[i])
			continue;
		if (!ls_field_ok(q->field[i], q->len[i]))
			return -EINVAL;
		o->h.len[i] = q->len[i];
		if (!q->len[i])
			continue;      /* empty, yet present */
		o->v[o->mh.msg_iovlen++] =
			(struct iovec){ (void *)q->field[i], q->len[i] };
		o->size += q->len[i];
	}
	return 0;
}

/* The n bytes of msg as a request; n is the message's real length
 * (recv with MSG_TRUNC), of which msg holds at least LS_REQUEST_MAX bytes
 * or all.  msg need not be aligned.  Every bound is checked before the
 * bytes it guards are read; q means nothing after a refusal. */
static inline int ls_req_decode(const void *msg, size_t n,
				struct ls_req_view *q)
{
	struct ls_request h;
	const char *p;
	size_t left;
	if (n < sizeof h || n > LS_REQUEST_MAX)
		return -EINVAL;
	memcpy(&h, msg, sizeof h);
	p = (const char *)msg + sizeof h;
	if (h.magic != LS_MAGIC || h.version != LS_VERSION ||
	    h.op == LS_OP_NONE)
		return -EINVAL;
	*q = (struct ls_req_view){ .op = h.op, .arg = h.arg, .tid = h.tid,
				   .fd1 = h.fd1 };
	left = n - sizeof h;
	for (int i = 0; i < LS_NFIELDS; i++) {
		if (h.len[i] == LS_ABSENT)
			continue;
		if (h.len[i] > left || !ls_field_ok(p, h.len[i]))
			return -EINVAL;
		q->field[i] = p;
		q->len[i] = h.len[i];
		p += h.len[i];
		left -= h.len[i];
	}
	return left == 0 ? 0 : -EINVAL;   /* nothing may trail the fields */
}

/* ---- the reply -------------------------------------------------------- */

/* A reply: what the broker sends, or views into what a client received. */
struct ls_rep_view {
	uint16_t op;         /* the request's, or LS_OP_NONE with EINVAL */
	int32_t error;       /* 0 or a positive errno */
	const char *text;    /* decoded: the text the buffer held */
	uint32_t len;
	int fd;              /* a descriptor that rides along, or -1 */
};

/* Control data with room for one descriptor more than a reply may carry,
 * so that a second one is seen, refused and closed by the caller; past the
 * room the kernel drops the rest and says MSG_CTRUNC, refused as well. */
#define LS_FD_ROOM 2
struct ls_cmsg {
	_Alignas(struct cmsghdr) char buf[CMSG_SPACE(LS_FD_ROOM * sizeof(int))];
};

/* A reply ready for sendmsg(fd, &mh, MSG_NOSIGNAL). */
struct ls_rep_out {
	struct ls_reply h;
	struct iovec v[2];
	struct ls_cmsg c;
	struct msghdr mh;
};

/* What both sides hold a reply to: an errno the kernel could return, text
 * that fits, and op 0 only for "your request was unreadable". */
static inline int ls_rep_ok(uint16_t op, int32_t error, uint32_t len)
{
	return error >= 0 && error <= LS_ERRNO_MAX && len <= LS_TEXT_MAX &&
	       (op != LS_OP_NONE || error == EINVAL);
}

/* a as a reply in o; -EINVAL for one that ls_rep_decode() would refuse. */
static inline int ls_rep_encode(struct ls_rep_out *o,
				const struct ls_rep_view *a)
{
	struct cmsghdr *cm;
	if (!ls_rep_ok(a->op, a->error, a->len) || (a->len && !a->text))
		return -EINVAL;
	o->h = (struct ls_reply){ LS_MAGIC, LS_VERSION, a->op, a->error,
				  a->len };
	o->v[0] = (struct iovec){ &o->h, sizeof o->h };
	o->v[1] = (struct iovec){ (void *)a->text, a->len };
	o->mh = (struct msghdr){ .msg_iov = o->v, .msg_iovlen = 2 };
	if (a->fd < 0)
		return 0;
	o->mh.msg_control = o->c.buf;
	o->mh.msg_controllen = CMSG_SPACE(sizeof(int));
	cm = CMSG_FIRSTHDR(&o->mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &a->fd, sizeof a->fd);
	return 0;
}

/* A reply to receive: recvmsg(fd, &mh, LS_REP_RECV_FLAGS), then
 * ls_rep_decode().  MSG_TRUNC makes recvmsg return the real length, so a
 * long reply is seen as long; MSG_CMSG_CLOEXEC keeps a descriptor from
 * leaking into the program's children. */
#define LS_REP_RECV_FLAGS (MSG_TRUNC | MSG_CMSG_CLOEXEC)
struct ls_rep_in {
	struct ls_reply h;
	struct iovec v[2];
	struct ls_cmsg c;
	struct msghdr mh;
	int fds[LS_FD_ROOM];   /* every descriptor that came, decoded */
	int nfd;
};

/* Receives the header into in, up to size bytes of text into text. */
static inline void ls_rep_expect(struct ls_rep_in *in, char *text,
				 size_t size)
{
	in->v[0] = (struct iovec){ &in->h, sizeof in->h };
	in->v[1] = (struct iovec){ text, size };
	in->mh = (struct msghdr){ .msg_iov = in->v, .msg_iovlen = 2,
				  .msg_control = in->c.buf,
				  .msg_controllen = sizeof in->c.buf };
	in->nfd = 0;
}

/* Lists in in->fds every descriptor that came, for the caller to close
 * those it does not keep; -EIO for more than one, for more than the room
 * held (the kernel dropped the rest), or for control data of another
 * kind. */
static inline int ls_rep_fds(struct ls_rep_in *in)
{
	int bad = in->mh.msg_flags & MSG_CTRUNC;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&in->mh); cm;
	     cm = CMSG_NXTHDR(&in->mh, cm)) {
		size_t k;
		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len < CMSG_LEN(0)) {
			bad = 1;
			continue;
		}
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t j = 0; j < k && in->nfd < LS_FD_ROOM; j++)
			memcpy(&in->fds[in->nfd++],
			       CMSG_DATA(cm) + j * sizeof(int), sizeof(int));
	}
	return bad || in->nfd > 1 ? -EIO : 0;
}

/* The n bytes received into in (recvmsg's result, n > 0) as the reply to
 * a request of op.  On success a->text views the text the buffer held
 * (a->len bytes, cut to the buffer), a->fd is the descriptor that came or
 * -1.  Either way in->fds[0..nfd) lists every descriptor that came: on a
 * refusal the caller closes them all, on success those it does not keep. */
static inline int ls_rep_decode(struct ls_rep_in *in, size_t n, uint16_t op,
				struct ls_rep_view *a)
{
	const struct ls_reply *h = &in->h;
	int bad = ls_rep_fds(in);
	*a = (struct ls_rep_view){ .text = in->v[1].iov_base, .fd = -1 };
	if (bad || n < sizeof *h || n > LS_REPLY_MAX)
		return -EIO;
	if (h->magic != LS_MAGIC || h->version != LS_VERSION ||
	    (h->op != op && h->op != LS_OP_NONE) ||
	    !ls_rep_ok(h->op, h->error, h->len) || h->len != n - sizeof *h)
		return -EIO;
	a->op = h->op;
	a->error = h->error;
	a->len = h->len < in->v[1].iov_len ? h->len : (uint32_t)in->v[1].iov_len;
	a->fd = in->nfd ? in->fds[0] : -1;
	return 0;
}

#endif
