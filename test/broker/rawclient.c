/* rawclient: hand-built messages to sharebrokerd, for the attack tests
 * (test/broker/broker-attacks-peer.bats).  Unlike the shim it sends whatever it
 * is told, well-formed or not, and it also plays the roles of a client that
 * goes quiet and of a fake broker squatting the socket.
 *
 *   rawclient [--socket ADDR] [--op OP] [--arg N] [--field I=TEXT]...
 *             [--field-hex I=HEX]... [--len I=N]... [--extra N] [--pad-to N]
 *             [--short N] [--bad-magic] [--version N] [--raw-hex HEX]
 *             [--no-wait [--linger SECONDS]] [--silent SECONDS [--conns N]]
 *             [--handoff FILE] [--give N] [--fd1 N] [--chroot DIR] [--uid N]
 *   rawclient [--socket ADDR] --listen [--count N]
 *
 * --fd1 N says the connection is the client's descriptor N - 1 (the broker
 * checks it; 0, the default, says nothing).
 * OP is a number or mount, umount, pivot_root, chroot, status, stop, jails,
 * tree, graph, mounttable.  --chroot DIR and --uid N: first chroot into
 * DIR, then drop to uid and gid N with no groups (a jailed, or
 * unprivileged, caller).
 * Fields are absent unless given; --len overrides the length a field
 * declares (so lengths need not add up), --extra appends N bytes after the
 * fields, --pad-to N pads the whole message with 'x' to N bytes, --short N
 * sends only its first N bytes, --raw-hex sends exactly the given bytes.
 * --no-wait closes the connection right after sending (and with --linger
 * stays alive SECONDS more), --silent connects (N times with --conns) and
 * sends nothing for SECONDS.  --handoff FILE: the process that connected
 * prints "connected PID" and exits at once; a child it forked keeps the
 * connection, waits until FILE exists, then sends (the pid the broker got
 * from SO_PEERCRED may belong to someone else by then).  --give N: the
 * process that connected forks a child that drops to uid and gid N and
 * sends, while it waits, alive and holding the connection too (a
 * connection handed on: the request is the child's).  --listen binds
 * ADDR, prints "request op=N (B bytes)" for every message it gets and
 * answers it "error 0" (a squatter: the shim must not believe it, nor send
 * it anything).
 *
 * Output: "reply op=N error=NAME" then the reply's text, "closed" when
 * the connection ends without a reply, or "garbled reply" for one the
 * codec refuses as the answer to the op sent (libshare_wire.h: op 0 and
 * EINVAL answer any; --raw-hex expects that).  Messages are built by
 * hand, to be malformed at will; the address and the reply are the
 * codec's.  Exit status: 0 a reply, 1 no reply,
 * 2 usage, 3 no connection.
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "libshare_proto.h"
#include "libshare_wire.h"

#define MSG_MAX (1 << 17)

struct msg {
	struct ls_request h;
	char body[MSG_MAX];
	size_t n;              /* bytes of body */
	long declared[LS_NFIELDS]; /* --len overrides, -1: none */
};

static void usage(void)
{
	fprintf(stderr, "usage: rawclient [--socket ADDR] [--op OP] [--arg N] "
		"[--field I=TEXT] [--field-hex I=HEX] [--len I=N] [--extra N] "
		"[--pad-to N] [--short N] [--bad-magic] [--version N] "
		"[--raw-hex HEX] [--no-wait [--linger S]] "
		"[--silent S [--conns N]] [--handoff FILE] | --listen [--count N]\n");
	exit(2);
}

static const char *err_name(int e)
{
	static char buf[16];
	const char *s = e ? strerrorname_np(e) : "0";
	if (s)
		return s;
	snprintf(buf, sizeof buf, "E%d", e);
	return buf;
}

static int op_of(const char *s)
{
	static const char *const names[] = { NULL, "mount", "umount",
		"pivot_root", "chroot", "status", "stop", "jails", "tree",
		"graph", "mounttable" };
	for (int i = 1; i < (int)(sizeof names / sizeof *names); i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return (int)strtol(s, NULL, 0);
}

static size_t unhex(const char *hex, char *out, size_t size)
{
	size_t n = 0;
	for (; hex[0] && hex[1] && n < size; hex += 2) {
		unsigned v;
		if (sscanf(hex, "%2x", &v) != 1)
			usage();
		out[n++] = (char)v;
	}
	return n;
}

/* "I=REST": the field index, and REST. */
static int index_of(const char *arg, const char **rest)
{
	if (arg[0] < '0' || arg[0] >= '0' + LS_NFIELDS || arg[1] != '=')
		usage();
	*rest = arg + 2;
	return arg[0] - '0';
}

/* Fields in index order, as the protocol puts them. */
static void build(struct msg *m, char *text[LS_NFIELDS], size_t len[LS_NFIELDS])
{
	m->n = 0;
	for (int i = 0; i < LS_NFIELDS; i++) {
		m->h.len[i] = text[i] ? (uint32_t)len[i] : LS_ABSENT;
		if (m->declared[i] >= 0)
			m->h.len[i] = (uint32_t)m->declared[i];
		if (text[i]) {
			memcpy(m->body + m->n, text[i], len[i]);
			m->n += len[i];
		}
	}
}

static int connect_to(const char *addr)
{
	struct sockaddr_un sa;
	socklen_t len;
	int fd, err = ls_address(addr, &sa, &len);
	if (err == 0 && (fd = socket(AF_UNIX, SOCK_SEQPACKET, 0)) >= 0 &&
	    connect(fd, (struct sockaddr *)&sa, len) == 0)
		return fd;
	printf("connect: %s\n", err_name(err ? -err : errno));
	exit(3);
}

/* A squatter: answers everything with success, as root never would. */
static int listen_fake(const char *addr, long count)
{
	struct sockaddr_un sa;
	socklen_t sl;
	int fd, err = ls_address(addr, &sa, &sl);
	if (err < 0 || (fd = socket(AF_UNIX, SOCK_SEQPACKET, 0)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sl) < 0 || listen(fd, 16) < 0) {
		printf("listen: %s\n", err_name(err < 0 ? -err : errno));
		return 3;
	}
	printf("listening\n");
	fflush(stdout);
	for (long i = 0; count < 0 || i < count; i++) {
		static char buf[MSG_MAX];
		int c = accept(fd, NULL, NULL);
		if (c < 0)
			continue;
		ssize_t n = recv(c, buf, sizeof buf, 0);
		const struct ls_request *r = (const void *)buf;
		if (n > 0) {
			printf("request op=%u (%zd bytes)\n",
			       n >= (ssize_t)sizeof *r ? r->op : 0, n);
			fflush(stdout);
		}
		struct ls_reply rep = { LS_MAGIC, LS_VERSION,
			n >= (ssize_t)sizeof *r ? r->op : 0, 0, 0 };
		send(c, &rep, sizeof rep, MSG_NOSIGNAL);
		close(c);
	}
	return 0;
}

/* Sends n bytes of out, and prints the reply to a request of op. */
static int exchange(int fd, const char *out, size_t n, uint16_t op,
		    bool wait)
{
	static char text[LS_TEXT_MAX];
	struct ls_rep_in in;
	struct ls_rep_view r;
	ssize_t got;
	int bad;
	if (send(fd, out, n, MSG_NOSIGNAL) != (ssize_t)n) {
		printf("send: %s\n", err_name(errno));
		return 1;
	}
	if (!wait)
		return 0;
	ls_rep_expect(&in, text, sizeof text);
	if ((got = recvmsg(fd, &in.mh, LS_REP_RECV_FLAGS)) <= 0) {
		printf("closed\n");
		return 1;
	}
	bad = ls_rep_decode(&in, (size_t)got, op, &r);
	for (int i = 0; i < in.nfd; i++)
		close(in.fds[i]);
	if (bad) {
		printf("garbled reply (%zd bytes)\n", got);
		return 1;
	}
	printf("reply op=%u error=%s\n", r.op, err_name(r.error));
	fwrite(r.text, 1, r.len, stdout);
	return 0;
}

/* --give: returns in the child, uid and gid n; the parent exits with the
 * child's status once it has ended. */
static void give_away(long n)
{
	int st = 0;
	pid_t child = fork();
	if (child == 0) {
		if (setgroups(0, NULL) < 0 || setgid((gid_t)n) < 0 ||
		    setuid((uid_t)n) < 0)
			_exit(2);
		return;
	}
	if (child < 0 || waitpid(child, &st, 0) < 0)
		exit(2);
	exit(WIFEXITED(st) ? WEXITSTATUS(st) : 2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "op", required_argument, NULL, 'o' },
		{ "arg", required_argument, NULL, 'a' },
		{ "field", required_argument, NULL, 'f' },
		{ "field-hex", required_argument, NULL, 'F' },
		{ "len", required_argument, NULL, 'l' },
		{ "extra", required_argument, NULL, 'e' },
		{ "pad-to", required_argument, NULL, 'p' },
		{ "short", required_argument, NULL, 'S' },
		{ "bad-magic", no_argument, NULL, 'm' },
		{ "version", required_argument, NULL, 'v' },
		{ "raw-hex", required_argument, NULL, 'r' },
		{ "no-wait", no_argument, NULL, 'n' },
		{ "silent", required_argument, NULL, 'q' },
		{ "linger", required_argument, NULL, 'g' },
		{ "listen", no_argument, NULL, 'L' },
		{ "count", required_argument, NULL, 'c' },
		{ "conns", required_argument, NULL, 'C' },
		{ "handoff", required_argument, NULL, 'H' },
		{ "give", required_argument, NULL, 'G' },
		{ "fd1", required_argument, NULL, 'X' },
		{ "chroot", required_argument, NULL, 'R' },
		{ "uid", required_argument, NULL, 'U' },
		{ 0 }
	};
	static struct msg m;
	static char fieldbuf[LS_NFIELDS][MSG_MAX], raw[MSG_MAX], out[MSG_MAX];
	char *text[LS_NFIELDS] = { 0 };
	size_t len[LS_NFIELDS] = { 0 }, extra = 0, pad_to = 0, nraw = 0;
	long cut = -1, count = -1, silent = -1, linger = 0, conns = 1;
	const char *addr = getenv(LS_SOCKET_ENV), *rest, *handoff = NULL;
	const char *jail = NULL;
	long uid = -1, give = -1;
	bool wait = true, fake = false, have_raw = false;
	int c, i;

	m.h = (struct ls_request){ LS_MAGIC, LS_VERSION, LS_OP_STATUS, 0,
		{ LS_ABSENT, LS_ABSENT, LS_ABSENT, LS_ABSENT }, 0, 0 };
	for (i = 0; i < LS_NFIELDS; i++)
		m.declared[i] = -1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1)
		switch (c) {
		case 's': addr = optarg; break;
		case 'o': m.h.op = (uint16_t)op_of(optarg); break;
		case 'a': m.h.arg = strtoull(optarg, NULL, 0); break;
		case 'f':
			i = index_of(optarg, &rest);
			len[i] = strlen(rest);
			text[i] = memcpy(fieldbuf[i], rest, len[i]);
			break;
		case 'F':
			i = index_of(optarg, &rest);
			len[i] = unhex(rest, fieldbuf[i], MSG_MAX);
			text[i] = fieldbuf[i];
			break;
		case 'l':
			i = index_of(optarg, &rest);
			m.declared[i] = strtol(rest, NULL, 0);
			break;
		case 'e': extra = strtoul(optarg, NULL, 0); break;
		case 'p': pad_to = strtoul(optarg, NULL, 0); break;
		case 'S': cut = strtol(optarg, NULL, 0); break;
		case 'm': m.h.magic = 0xdeadbeefu; break;
		case 'v': m.h.version = (uint16_t)strtoul(optarg, NULL, 0); break;
		case 'r': nraw = unhex(optarg, raw, sizeof raw); have_raw = true; break;
		case 'n': wait = false; break;
		case 'q': silent = strtol(optarg, NULL, 0); break;
		case 'g': linger = strtol(optarg, NULL, 0); break;
		case 'L': fake = true; break;
		case 'c': count = strtol(optarg, NULL, 0); break;
		case 'C': conns = strtol(optarg, NULL, 0); break;
		case 'H': handoff = optarg; break;
		case 'G': give = strtol(optarg, NULL, 10); break;
		case 'X': m.h.fd1 = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'R': jail = optarg; break;
		case 'U': uid = strtol(optarg, NULL, 10); break;
		default: usage();
		}
	if (optind != argc)
		usage();
	if ((jail && (chroot(jail) < 0 || chdir("/") < 0)) ||
	    (uid >= 0 && (setgroups(0, NULL) < 0 || setgid((gid_t)uid) < 0 ||
			  setuid((uid_t)uid) < 0))) {
		perror("rawclient");
		return 2;
	}
	addr = ls_socket_name(addr);
	if (fake)
		return listen_fake(addr, count);

	if (silent >= 0) {     /* connected, and nothing more */
		for (long k = 0; k < conns; k++)
			connect_to(addr);
		printf("%ld connections\n", conns);
		fflush(stdout);
		sleep((unsigned)silent);
		return 0;
	}
	int fd = connect_to(addr);
	if (handoff) {         /* the connecting process leaves */
		printf("connected %d\n", (int)getpid());
		fflush(stdout);
		pid_t child = fork();
		if (child != 0)
			_exit(child < 0);
		while (access(handoff, F_OK) < 0)
			usleep(10000);
	}
	if (give >= 0)
		give_away(give);
	size_t n;
	if (have_raw) {
		memcpy(out, raw, nraw);
		n = nraw;
	} else {
		build(&m, text, len);
		if (extra + m.n > MSG_MAX)
			usage();
		memset(m.body + m.n, 'x', extra);
		m.n += extra;
		memcpy(out, &m.h, sizeof m.h);
		memcpy(out + sizeof m.h, m.body, m.n);
		n = sizeof m.h + m.n;
		if (pad_to > sizeof out)
			usage();
		if (pad_to > n) {
			memset(out + n, 'x', pad_to - n);
			n = pad_to;
		}
	}
	if (cut >= 0 && (size_t)cut < n)
		n = (size_t)cut;
	int rc = exchange(fd, out, n, have_raw ? LS_OP_NONE : m.h.op, wait);
	close(fd);
	if (linger > 0)
		sleep((unsigned)linger);
	return rc;
}
