/* wirefuzz: a protocol fuzzer against a running sharebrokerd (issue 9
 * item 9).  Each case is one connection (or a few) carrying well-formed
 * requests built with the codec, their mutations or random bytes, with
 * descriptors of every kind attached, several messages on one connection,
 * connections closed early or left silent, floods of connections that read
 * late.  Each answer is judged against the codec's own reading of what was
 * sent:
 *
 *   a request ls_req_decode refuses    op 0 EINVAL (or a reset), then the
 *                                      connection closes
 *   a request it takes                 a reply to that op, any errno; the
 *                                      connection stays for the next one
 *   each answer within --timeout ms, or a hang
 *
 *   wirefuzz [--socket ADDR] [--seed S] [--first K] [--cases N]
 *            [--timeout MS] [--chroot DIR] [--uid N] [--word W]...
 *            [--verbose]
 *
 * Case K of seed S depends on (S, K) alone (the silent connections earlier
 * cases left open aside): "--seed S --first K --cases 1" replays it.
 * --chroot DIR: a jailed caller (chroot, chdir "/"); --uid N then drops to
 * uid and gid N, no groups.  Run as root, a request that could change a
 * mount is not sent (counted "withheld"): STOP, and a mount, umount or
 * pivot_root whose target exists (from either thread's cwd: requests also
 * name a second thread of the fuzzer, whose cwd is "/", in their tid).
 * --word adds a word to the fields' dictionary (the sandbox's paths).
 *
 * Prints a line per bad case and a summary; exit 0 when no case hung or
 * was answered wrongly, 1 otherwise, 2 usage, 3 the broker went away.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include "libshare_wire.h"
#include "fuzzgen.h"

struct fuzz {
	struct sockaddr_un sa;
	socklen_t salen;
	uint64_t seed;
	long first, cases, k;          /* k: the case running */
	int timeout;                   /* ms */
	bool verbose;
	long replied, closed, reset, hangs, wrong, unsent, withheld, fdsent;
	int parked[32], nparked;
	int other_cwd;                 /* the other thread's cwd (O_PATH) */
};

/* A case that hung or was answered wrongly: what, and how to replay it. */
__attribute__((format(printf, 3, 4)))
static void bad(struct fuzz *z, long *counter, const char *fmt, ...)
{
	va_list ap;
	++*counter;
	printf("case %ld: ", z->k);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" (replay: --seed %llu --first %ld --cases 1)\n",
	       (unsigned long long)z->seed, z->k);
}

/* A connection, or -1 when the broker did not accept one in time.  A
 * refused one means the broker is gone: the run ends there. */
static int dial(struct fuzz *z)
{
	struct timeval tv = { z->timeout / 1000, (z->timeout % 1000) * 1000 };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		perror("wirefuzz: socket");
		exit(3);
	}
	/* a full backlog makes connect wait: SO_SNDTIMEO bounds it */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	if (connect(fd, (struct sockaddr *)&z->sa, z->salen) == 0)
		return fd;
	if (errno == EAGAIN || errno == EINPROGRESS) {
		bad(z, &z->hangs, "connect not accepted in %d ms", z->timeout);
	} else {
		printf("case %ld: broker gone: connect: %s\n", z->k,
		       strerror(errno));
		exit(3);
	}
	close(fd);
	return -1;
}

/* Whether m may be sent from here: as root, nothing that could change a
 * mount (the fuzzer's requests must leave the table as it was). */
static bool harmless(const struct fuzz *z, const struct fz_msg *m)
{
	struct ls_req_view q;
	char path[LS_FIELD_MAX + 1];
	struct stat st;
	if (geteuid() != 0 || ls_req_decode(m->b, m->n, &q) < 0)
		return true;
	if (q.op == LS_OP_STOP)
		return false;
	if (q.op != LS_OP_MOUNT && q.op != LS_OP_UMOUNT &&
	    q.op != LS_OP_PIVOT_ROOT)
		return true;
	if (!q.field[1])
		return false;
	memcpy(path, q.field[1], q.len[1]);
	path[q.len[1]] = '\0';
	/* no target, from either thread's cwd: nothing can change */
	return lstat(path, &st) < 0 &&
	       fstatat(z->other_cwd, path, &st, AT_SYMLINK_NOFOLLOW) < 0;
}

/* Sends m with whatever descriptors the case attaches; 0 or -1. */
static int post(struct fuzz *z, struct rng *g, int fd, const struct fz_msg *m)
{
	enum { FDMAX = 250 };          /* within SCM_MAX_FD */
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(FDMAX * sizeof(int))];
	} c;
	int fds[FDMAX], nfd = fz_fds(g, fd, fds, FDMAX);
	struct iovec v = { (void *)m->b, m->n };
	struct msghdr mh = { .msg_iov = &v, .msg_iovlen = 1 };
	ssize_t r;
	if (nfd > 0) {
		struct cmsghdr *cm;
		mh.msg_control = c.buf;
		mh.msg_controllen = CMSG_SPACE(nfd * sizeof(int));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(nfd * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, nfd * sizeof(int));
	}
	r = sendmsg(fd, &mh, MSG_NOSIGNAL);
	fz_fds_close(fds, nfd);
	if (r < 0) {
		z->unsent++;           /* e.g. EPIPE after the broker closed */
		return -1;
	}
	z->fdsent += nfd;
	return 0;
}

/* Waits for fd to be readable; false after the timeout. */
static bool ready(struct fuzz *z, int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r;
	while ((r = poll(&p, 1, z->timeout)) < 0 && errno == EINTR)
		;
	return r > 0;
}

/* The answer to message m, the k-th of the sent messages posted on fd:
 * judged, counted.  1: answered, the connection goes on; 0: it ended
 * there, as it may; -1: it ended in a fault already counted.  reset: a
 * malformed message comes later with another after it, which the broker
 * leaves unread when it closes: the kernel reports that reset before
 * the answers still queued (sock_error first). */
static int judge_one(struct fuzz *z, int fd, const struct fz_msg *m, int k,
		     bool reset)
{
	struct ls_req_view q;
	bool wellformed = ls_req_decode(m->b, m->n, &q) == 0;
	uint16_t op = wellformed ? q.op : LS_OP_NONE;
	char text[LS_TEXT_MAX];
	struct ls_rep_in in;
	struct ls_rep_view a;
	ssize_t n;
	ls_rep_expect(&in, text, sizeof text);
	if (!ready(z, fd))
		return bad(z, &z->hangs, "no answer in %d ms (op %u, %zu "
			   "bytes, message %d)", z->timeout, op, m->n, k + 1), -1;
	n = recvmsg(fd, &in.mh, LS_REP_RECV_FLAGS);
	if (n < 0 && errno == ECONNRESET && reset)
		return z->reset++, 0;
	if (n <= 0) {
		/* a malformed one closes the connection: the reset of what
		 * followed it unread may come before its EINVAL */
		z->closed++;
		if (wellformed && m->n)
			return bad(z, &z->wrong, "closed without a reply (op "
				   "%u): %s", op, n < 0 ? strerror(errno) :
				   "end of file"), -1;
		return 0;
	}
	for (int i = 0; i < in.nfd; i++)
		close(in.fds[i]);
	if (ls_rep_decode(&in, (size_t)n, op, &a) < 0 ||
	    (wellformed && a.op != op) ||
	    (!wellformed && (a.op != LS_OP_NONE || a.error != EINVAL)))
		return bad(z, &z->wrong, "reply op %u error %d to op %u (%s, "
			   "%zu bytes)", in.h.op, in.h.error, op, wellformed ?
			   "well-formed" : "malformed", m->n), -1;
	z->replied++;
	if (wellformed)
		return 1;
	if (!ready(z, fd))
		bad(z, &z->hangs, "still open %d ms after refusing a malformed "
		    "request", z->timeout);
	else if (recv(fd, text, sizeof text, MSG_DONTWAIT) > 0)
		bad(z, &z->wrong, "an answer after a malformed request");
	return 0;
}

/* The answers to the sent messages posted on fd, m[0] to m[sent - 1], in
 * their order: after the last, the connection stays and says nothing. */
static void judge(struct fuzz *z, int fd, const struct fz_msg *const *m,
		  int sent)
{
	char spare[LS_TEXT_MAX];
	struct ls_req_view q;
	for (int k = 0; k < sent; k++) {
		bool reset = false;
		for (int j = k; j < sent - 1 && !reset; j++)
			reset = ls_req_decode(m[j]->b, m[j]->n, &q) < 0;
		if (judge_one(z, fd, m[k], k, reset) <= 0)
			return;
	}
	if (recv(fd, spare, sizeof spare, MSG_DONTWAIT) >= 0)
		bad(z, &z->wrong, "an answer too many, or a close, after %d "
		    "answered", sent);
}

/* A message for case g: valid, mutated, or random bytes. */
static void message(struct rng *g, struct fz_msg *m)
{
	uint32_t pick = rng_below(g, 10);
	if (pick < 2) {
		fz_random(g, m);
		return;
	}
	fz_valid(g, m);
	for (uint32_t i = pick < 4 ? 0 : 1 + rng_below(g, 3); i > 0; i--)
		fz_mutate(g, m);
}

/* One connection by pick (0-99): 0-69 one message and its answer, 70-84
 * several messages (each answered in turn), 85-91 closed early
 * (after a message, or none), 95-99 silent, parked until later. */
static void one(struct fuzz *z, struct rng *g, uint32_t pick)
{
	static struct fz_msg m[4];
	const struct fz_msg *posted[4];
	int nmsg = pick < 70 ? 1 : 2 + (int)rng_below(g, 3);
	int fd, sent = 0;
	message(g, &m[0]);
	if (!harmless(z, &m[0])) {
		z->withheld++;
		return;
	}
	if ((fd = dial(z)) < 0)
		return;
	if (pick >= 95) {              /* silent: parked, closed some day */
		if (z->nparked == 32) {
			int i = (int)rng_below(g, 32);
			close(z->parked[i]);
			z->parked[i] = z->parked[--z->nparked];
		}
		z->parked[z->nparked++] = fd;
		return;
	}
	if (pick < 85 || rng_below(g, 2)) {
		if (post(z, g, fd, &m[0]) == 0)
			posted[sent++] = &m[0];
		for (int i = 1; sent && i < nmsg; i++) {
			message(g, &m[i]);
			if (harmless(z, &m[i]) && post(z, g, fd, &m[i]) == 0)
				posted[sent++] = &m[i];
		}
	}
	if (pick < 85 && sent > 0)
		judge(z, fd, posted, sent);
	close(fd);                     /* early, unless judged */
}

/* A flood: connections that all send before any reads its answer. */
static void flood(struct fuzz *z, struct rng *g)
{
	static struct fz_msg m[16];
	int fd[16], n = 2 + (int)rng_below(g, 15);
	for (int i = 0; i < n; i++) {
		message(g, &m[i]);
		fd[i] = harmless(z, &m[i]) ? dial(z) : (z->withheld++, -1);
		if (fd[i] >= 0 && post(z, g, fd[i], &m[i]) < 0) {
			close(fd[i]);
			fd[i] = -1;
		}
	}
	for (int i = 0; i < n; i++)
		if (fd[i] >= 0) {
			const struct fz_msg *one = &m[i];
			judge(z, fd[i], &one, 1);
			close(fd[i]);
		}
}

static void run_case(struct fuzz *z)
{
	struct rng g;
	uint32_t pick;
	rng_seed(&g, z->seed, (uint64_t)z->k);
	pick = rng_below(&g, 100);
	if (pick >= 92 && pick < 95)
		flood(z, &g);
	else
		one(z, &g, pick);
}

static void usage(void)
{
	fprintf(stderr, "usage: wirefuzz [--socket ADDR] [--seed S] [--first K] "
		"[--cases N] [--timeout MS] [--chroot DIR] [--uid N] [--word W]... "
		"[--verbose]\n");
	exit(2);
}

static void options(struct fuzz *z, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'S' },
		{ "first", required_argument, NULL, 'f' },
		{ "cases", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ "chroot", required_argument, NULL, 'c' },
		{ "uid", required_argument, NULL, 'u' },
		{ "word", required_argument, NULL, 'w' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sock = getenv(LS_SOCKET_ENV), *jail = NULL;
	long uid = -1;
	int c;
	z->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1)
		switch (c) {
		case 's': sock = optarg; break;
		case 'S': z->seed = strtoull(optarg, NULL, 0); break;
		case 'f': z->first = strtol(optarg, NULL, 0); break;
		case 'n': z->cases = strtol(optarg, NULL, 0); break;
		case 't': z->timeout = atoi(optarg); break;
		case 'c': jail = optarg; break;
		case 'u': uid = strtol(optarg, NULL, 0); break;
		case 'w': fz_dict_add(optarg); break;
		case 'v': z->verbose = true; break;
		default: usage();
		}
	if (optind != argc || z->cases < 0 || z->first < 0 || z->timeout <= 0 ||
	    ls_address(ls_socket_name(sock), &z->sa, &z->salen) < 0)
		usage();
	if (jail && (chroot(jail) < 0 || chdir("/") < 0)) {
		perror("wirefuzz: --chroot");
		exit(2);
	}
	if (uid >= 0 && (setgroups(0, NULL) < 0 || setgid((gid_t)uid) < 0 ||
			 setuid((uid_t)uid) < 0)) {
		perror("wirefuzz: --uid");
		exit(2);
	}
}

int main(int argc, char **argv)
{
	static struct fuzz z = { .cases = 10000, .timeout = 5000 };
	double t0, t;
	options(&z, argc, argv);
	if ((z.other_cwd = fz_threads()) < 0) {
		perror("wirefuzz: a second thread");
		exit(2);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("wirefuzz: seed %llu, cases %ld from %ld, uid %d\n",
	       (unsigned long long)z.seed, z.cases, z.first, (int)geteuid());
	t0 = fz_now();
	for (z.k = z.first; z.k < z.first + z.cases; z.k++) {
		run_case(&z);
		if (z.verbose && (z.k + 1) % 1000 == 0)
			printf("%ld cases, %.0f/s\n", z.k + 1 - z.first,
			       (double)(z.k + 1 - z.first) / (fz_now() - t0));
	}
	while (z.nparked > 0)
		close(z.parked[--z.nparked]);
	t = fz_now() - t0;
	printf("wirefuzz: %ld cases in %.1f s (%.0f cases/s): %ld replies, "
	       "%ld closed, %ld reset, %ld hangs, %ld wrong; %ld unsent, "
	       "%ld withheld, %ld descriptors passed\n", z.cases, t,
	       (double)z.cases / t, z.replied, z.closed, z.reset, z.hangs,
	       z.wrong, z.unsent, z.withheld, z.fdsent);
	return z.hangs || z.wrong ? 1 : 0;
}
