/* libshare_proto.h: the wire protocol between libshare.so (and sharectl)
 * and sharebrokerd.
 *
 * Transport: an AF_UNIX SOCK_SEQPACKET socket.  The client connects, sends
 * a request message, reads its reply message, and may send the next on
 * the same connection (the shim keeps one per process: shim/conn.c); one
 * request is in flight per connection.  The broker takes the caller's
 * identity from the kernel (the SCM_CREDENTIALS each message comes with,
 * which the kernel checks; without them SO_PEERCRED of the connection;
 * then /proc/<pid>/root and cwd), never from the message's bytes; the
 * client accepts only a broker whose SO_PEERCRED uid is 0.  A broker that
 * closes a connection with a request unread makes the client's receive
 * fail with ECONNRESET: that request was not served, and may be sent
 * again on a new connection.
 *
 * Every integer is in the host's byte order (client and broker run on the
 * same machine), with fixed widths so that a 32-bit client talks to a
 * 64-bit broker.
 */
#ifndef LS_PROTO_H
#define LS_PROTO_H

#include <stdint.h>

/* The socket address: "@name" is an abstract socket (reachable from every
 * chroot without per-jail setup, since it lives in no filesystem), "/path"
 * a filesystem path; 2 to 107 bytes either way, nothing else (ls_address()
 * in libshare_wire.h).  LIBSHARE_SOCKET overrides the default for the
 * broker, the shim and sharectl alike; set but empty, it is the default. */
#define LS_SOCKET_DEFAULT "@libshare"
#define LS_SOCKET_ENV "LIBSHARE_SOCKET"

#define LS_MAGIC 0x3148534cu       /* "LSH1" in memory on little-endian */
#define LS_VERSION 1

/* The longest field: a path of PATH_MAX, or the page of mount data. */
#define LS_FIELD_MAX 4096
/* The largest request: the header and four fields of LS_FIELD_MAX.
 * Anything longer is malformed. */
#define LS_REQUEST_MAX (40 + 4 * LS_FIELD_MAX)
/* The largest reply, text included, and its text alone. */
#define LS_REPLY_MAX 65536
#define LS_TEXT_MAX (LS_REPLY_MAX - 16)
/* The largest errno a reply carries, as the kernel's MAX_ERRNO. */
#define LS_ERRNO_MAX 4095

enum ls_op {
	LS_OP_NONE = 0,        /* never a request: the op of the EINVAL reply
				  to a request the broker could not read */
	LS_OP_MOUNT = 1,       /* fields: source, target, fstype, data;
				  arg: mount(2) flags */
	LS_OP_UMOUNT = 2,      /* field 1: target; arg: umount2(2) flags */
	LS_OP_PIVOT_ROOT = 3,  /* fields 0, 1: new_root, put_old.  On
				  success the reply carries (SCM_RIGHTS) a
				  directory descriptor of the new root, and
				  the text "cwd" when the caller's cwd was
				  its root: the caller re-roots itself
				  (fchdir to it, chroot("."), and fchdir back
				  to its old cwd unless "cwd"), since the
				  broker cannot chroot another process */
	LS_OP_CHROOT = 4,      /* after a successful chroot(2): the broker
				  learns the caller's new root; no fields */
	LS_OP_STATUS = 5,      /* reply text: one line about the broker */
	LS_OP_STOP = 6,        /* the broker exits, mounts stay; arg
				  LS_STOP_FINAL: no broker follows, its
				  holder ends too (covered mounts are no
				  longer kept for one) */
	LS_OP_JAILS = 7,       /* reply text: the roots of past callers,
				  one per line */
	LS_OP_TREE = 8,        /* field 1: the root directory of the view,
				  looked up in the caller's root; absent:
				  the caller's own root.  Or field 0: a
				  pid, whose root and namespace are the
				  view (a process the caller could see).  The reply carries
				  (SCM_RIGHTS) a read-only descriptor of a
				  file holding the mount tree as findmnt
				  -o TARGET,SOURCE,FSROOT,PROPAGATION shows
				  it from there; no text */
	LS_OP_GRAPH = 9,       /* only from a caller on the host's root:
				  the propagation graph in Graphviz DOT, as
				  a descriptor like LS_OP_TREE's */
	LS_OP_MOUNTTABLE = 10, /* field 1: "mountinfo" or "mounts"; field 0,
				  if there, a pid: that process's table
				  (/proc/PID/mountinfo), as for LS_OP_TREE.  The
				  calling thread's mount table as the kernel
				  would show it (/proc/self/mountinfo, or
				  /proc/mounts' format), rendered for its
				  root now, as a descriptor like
				  LS_OP_TREE's, at offset 0; no text */
	LS_OP_UNSHARE = 11,    /* unshare(CLONE_NEWNS): a copy of the
				  calling thread's mount namespace; no
				  fields, arg 0.  The reply carries
				  (SCM_RIGHTS) a token of the new namespace
				  (the descriptor its ns file stands for);
				  the caller then enters it with
				  LS_OP_SETNS, keeping the token open as
				  long as it is in there */
	LS_OP_SETNS = 12,      /* setns(fd, CLONE_NEWNS): arg is the
				  caller's descriptor number of a token.
				  The reply carries a directory descriptor
				  of the root the caller re-roots itself to
				  (fchdir, chroot(".")), and as text the
				  number of another namespace's token the
				  caller holds as a member and may close
				  ("" when none) */
	LS_OP_NSFILE = 13,     /* open("/proc/PID/ns/mnt"): arg is PID, 0
				  for the calling thread.  The reply
				  carries a token of PID's namespace and
				  as text its number N (readlink shows
				  "mnt:[N]", stat st_ino N); with
				  LS_NSFILE_NUMBER in arg, only the
				  number; with LS_NSFILE_PIDFD, arg's low
				  32 bits are the caller's descriptor
				  number of a pidfd, whose process is PID
				  (setns(pidfd, CLONE_NEWNS)) */
	LS_OP_NAMESPACES = 14, /* sharectl ns, from a privileged caller on
				  the host's root: reply text, a line per
				  mount namespace (its number, root,
				  mounts and processes) */
	LS_OP_LEAVE = 15,      /* the caller is about to exit (exit(3)) and
				  has closed its member token: its mount
				  namespace ends now if nothing else keeps
				  it (no other process's root in it, no
				  token of it open).  No fields, arg 0; the
				  reply comes after the teardown */
};
#define LS_NSFILE_NUMBER (1ull << 32)
#define LS_NSFILE_PIDFD (1ull << 33)
#define LS_STOP_FINAL 1ull

/* An op's name, for logs and messages: the call it stands for, or the
 * sharectl command.  op comes off the wire: anything past the table is
 * "unknown", never an index out of bounds. */
static inline const char *ls_op_name(unsigned op)
{
	static const char *const names[] = {
		[LS_OP_NONE] = "none", [LS_OP_MOUNT] = "mount",
		[LS_OP_UMOUNT] = "umount", [LS_OP_PIVOT_ROOT] = "pivot_root",
		[LS_OP_CHROOT] = "chroot", [LS_OP_STATUS] = "status",
		[LS_OP_STOP] = "stop", [LS_OP_JAILS] = "jails",
		[LS_OP_TREE] = "tree", [LS_OP_GRAPH] = "graph",
		[LS_OP_MOUNTTABLE] = "mounttable",
		[LS_OP_UNSHARE] = "unshare", [LS_OP_SETNS] = "setns",
		[LS_OP_NSFILE] = "nsfile", [LS_OP_NAMESPACES] = "ns",
		[LS_OP_LEAVE] = "leave",
	};
	return op < sizeof names / sizeof *names ? names[op] : "unknown";
}

#define LS_NFIELDS 4
#define LS_ABSENT 0xffffffffu      /* a field that was a NULL pointer */

struct ls_request {
	uint32_t magic;            /* LS_MAGIC */
	uint16_t version;          /* LS_VERSION */
	uint16_t op;               /* enum ls_op */
	uint64_t arg;              /* flags of the call, see enum ls_op */
	uint32_t len[LS_NFIELDS];  /* bytes of each field, or LS_ABSENT */
	uint32_t tid;              /* the calling thread, whose cwd and root
				      relative paths start from (a thread may
				      have its own); the broker takes it only
				      from the process that connected: 0 for
				      that process's own */
	uint32_t fd1;              /* the number of the client's descriptor
				      of this connection, plus one (0: not
				      said): the broker checks that the
				      process that connected holds the
				      connection there, rather than look
				      through all its descriptors */
	/* then the present fields, back to back, without terminators; the
	 * message length is exactly the header plus their sum */
};

struct ls_reply {
	uint32_t magic;            /* LS_MAGIC */
	uint16_t version;          /* LS_VERSION */
	uint16_t op;               /* the request's op; LS_OP_NONE with
				      EINVAL when it could not be read */
	int32_t error;             /* 0, or the positive errno of the call,
				      at most LS_ERRNO_MAX */
	uint32_t len;              /* bytes of text that follow, at most
				      LS_TEXT_MAX */
};

/* The errno a forwarded call fails with when no broker answers (none
 * listening, or one that is not root): the facility is missing. */
#define LS_ENOBROKER ENOSYS

#endif
