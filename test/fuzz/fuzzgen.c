/* fuzzgen.c: the messages and descriptors of wirefuzz's cases (fuzzgen.h).
 *
 * Well-formed requests come from the codec (ls_req_encode), so that the
 * mutations start from exactly what the shim sends and each one breaks a
 * single rule the broker must check: a header field, a length that no
 * longer adds up, a NUL inside a field, bytes cut or added.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "libshare_wire.h"
#include "fuzzgen.h"

/* ---- the generator: splitmix64, seeded by (seed, case) ---------------- */

void rng_seed(struct rng *g, uint64_t seed, uint64_t index)
{
	g->s = seed ^ (index * 0x9e3779b97f4a7c15ull);
	rng_next(g);
}

uint64_t rng_next(struct rng *g)
{
	uint64_t z = (g->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint32_t rng_below(struct rng *g, uint32_t n)
{
	return n ? (uint32_t)(rng_next(g) % n) : 0;
}

/* ---- the words fields are made of ------------------------------------- */

enum { DICT_MAX = 64 };
static const char *dict[DICT_MAX] = {
	"/", ".", "..", "", "none", "tmpfs", "proc", "overlay", "bind",
	"mountinfo", "mounts", "/proc/self/mountinfo", "/proc/self/cwd",
	"/proc/self/fd/0", "/proc/self/root", "/dev/null", "/etc",
	"../../../../../../../../etc", "lowerdir=/etc,upperdir=/tmp,workdir=/",
	"lowerdir=../../../..:/proc/self/fd/3", "size=1k", "mode=777",
	"/missing/x", "missing", "/tmp", "x\ny", "%s%n%s%n",
};
static int ndict = 27;

void fz_dict_add(const char *word)
{
	/* two words and a "/" make a field of at most LS_FIELD_MAX */
	if (ndict < DICT_MAX && strlen(word) < LS_FIELD_MAX / 2)
		dict[ndict++] = word;
}

/* A field: a word, a word with a tail, or random bytes without NUL,
 * 0 to LS_FIELD_MAX long; s has room for LS_FIELD_MAX bytes. */
static uint32_t field(struct rng *g, char *s)
{
	uint32_t n = 0, pick = rng_below(g, 6);
	const char *w;
	if (pick == 0) {
		n = rng_below(g, 2) ? LS_FIELD_MAX : rng_below(g, LS_FIELD_MAX);
		for (uint32_t i = 0; i < n; i++)
			s[i] = (char)(1 + rng_below(g, 255));
		return n;
	}
	if (pick == 1) {               /* a word, "/", then another */
		w = dict[rng_below(g, (uint32_t)ndict)];
		n = (uint32_t)strlen(w);
		memcpy(s, w, n);
		s[n++] = '/';
	}
	w = dict[rng_below(g, (uint32_t)ndict)];
	memcpy(s + n, w, strlen(w));
	return n + (uint32_t)strlen(w);
}

/* Threads a request may name: the process's own, and those added. */
static uint32_t tids[4];
static uint32_t ntid;

void fz_tid_add(uint32_t tid)
{
	if (ntid < sizeof tids / sizeof *tids)
		tids[ntid++] = tid;
}

/* A second thread with a cwd of its own ("/" of the fuzzer's root) for
 * requests to name in their tid: relative paths start there. */
static void *other_thread(void *arg)
{
	int *ready = arg;
	if (unshare(CLONE_FS) == 0 && chdir("/") == 0)
		__atomic_store_n(ready, (int)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	else
		__atomic_store_n(ready, -1, __ATOMIC_SEQ_CST);
	for (;;)
		pause();
	return NULL;
}

int fz_threads(void)
{
	static int tid;
	pthread_t t;
	int cwd = open("/", O_PATH | O_CLOEXEC);
	fz_tid_add((uint32_t)getpid());
	if (cwd < 0 || pthread_create(&t, NULL, other_thread, &tid))
		return -1;
	while (!__atomic_load_n(&tid, __ATOMIC_SEQ_CST))
		sched_yield();
	if (tid > 0)
		fz_tid_add((uint32_t)tid);
	return cwd;
}

static const uint64_t args[] = {
	0, MS_BIND, MS_BIND | MS_REC, MS_MOVE, MS_REMOUNT | MS_RDONLY,
	MS_SHARED, MS_SLAVE | MS_REC, MS_PRIVATE, MS_UNBINDABLE, 1 /* force */,
	2 /* detach */, 4 /* expire */, 8 /* nofollow */, ~0ull,
};

void fz_valid(struct rng *g, struct fz_msg *m)
{
	static char s[LS_NFIELDS][LS_FIELD_MAX];
	struct ls_req_view q = { 0 };
	struct ls_req_out o;
	q.op = (uint16_t)(rng_below(g, 8) ? 1 + rng_below(g, LS_OP_MOUNTTABLE)
					  : 1 + rng_below(g, 0xffff));
	q.arg = rng_below(g, 4) ? args[rng_below(g, sizeof args / sizeof *args)]
				: rng_next(g);
	q.tid = rng_below(g, 4) ? 0 : rng_below(g, 2) ? tids[rng_below(g, ntid)]
						      : (uint32_t)rng_next(g);
	for (int i = 0; i < LS_NFIELDS; i++)
		if (rng_below(g, 3)) {
			q.len[i] = field(g, s[i]);
			q.field[i] = s[i];
		}
	m->n = 0;
	if (ls_req_encode(&o, &q) < 0)
		return;        /* cannot happen: fields are NUL-free, short */
	for (size_t i = 0; i < o.mh.msg_iovlen; i++) {
		memcpy(m->b + m->n, o.v[i].iov_base, o.v[i].iov_len);
		m->n += o.v[i].iov_len;
	}
}

/* ---- mutations -------------------------------------------------------- */

static void put32(struct fz_msg *m, size_t off, uint32_t v)
{
	memcpy(m->b + off, &v, sizeof v);
}

static uint32_t get32(const struct fz_msg *m, size_t off)
{
	uint32_t v;
	memcpy(&v, m->b + off, sizeof v);
	return v;
}

static const uint32_t lens[] = {
	LS_ABSENT, 0, 1, LS_FIELD_MAX, LS_FIELD_MAX + 1, LS_REQUEST_MAX,
	0x7fffffff, 0x80000000u, LS_ABSENT - 1,
};

/* A header field of a message at least a header long.  Offsets are
 * struct ls_request's: magic 0, version 4, op 6, arg 8, len 16, tid 32,
 * reserved 36. */
static void mutate_header(struct rng *g, struct fz_msg *m)
{
	uint16_t v16 = (uint16_t)rng_next(g);
	uint64_t v64 = rng_next(g);
	size_t li = 16 + 4 * rng_below(g, LS_NFIELDS);
	switch (rng_below(g, 8)) {
	case 0: put32(m, 0, rng_below(g, 2) ? (uint32_t)v64
					    : LS_MAGIC ^ (1u << rng_below(g, 32)));
		break;
	case 1: memcpy(m->b + 4, &v16, 2); break;           /* version */
	case 2: v16 = rng_below(g, 2) ? 0 : v16;            /* op */
		memcpy(m->b + 6, &v16, 2);
		break;
	case 3: memcpy(m->b + 8, &v64, 8); break;           /* arg */
	case 4: put32(m, li, lens[rng_below(g, sizeof lens / sizeof *lens)]);
		break;
	case 5: put32(m, li, get32(m, li) + (rng_below(g, 2) ? 1 : -1u));
		break;
	case 6: put32(m, 32, (uint32_t)v64); break;         /* tid */
	default: put32(m, 36, (uint32_t)v64 | 1); break;    /* reserved */
	}
}

/* One byte moves from field i's length to field j's: the sum still adds
 * up, so only the field checks can refuse it (or none: a new request). */
static void shift_length(struct rng *g, struct fz_msg *m)
{
	size_t i = 16 + 4 * rng_below(g, LS_NFIELDS);
	size_t j = 16 + 4 * rng_below(g, LS_NFIELDS);
	uint32_t a = get32(m, i), b = get32(m, j);
	if (i == j || a == LS_ABSENT || a == 0 || b == LS_ABSENT)
		return;
	put32(m, i, a - 1);
	put32(m, j, b + 1);
}

void fz_mutate(struct rng *g, struct fz_msg *m)
{
	size_t k;
	switch (rng_below(g, 7)) {
	case 0:
	case 1:
		if (m->n >= sizeof(struct ls_request))
			mutate_header(g, m);
		break;
	case 2:
		m->n = rng_below(g, (uint32_t)m->n + 1);    /* cut */
		break;
	case 3:                                             /* extend */
		k = rng_below(g, 4) ? 1 + rng_below(g, 64)
				    : rng_below(g, FZ_MSG_MAX - (uint32_t)m->n);
		for (size_t i = 0; i < k && m->n < FZ_MSG_MAX; i++)
			m->b[m->n++] = (unsigned char)rng_next(g);
		break;
	case 4:                                             /* a NUL */
		if (m->n > sizeof(struct ls_request))
			m->b[sizeof(struct ls_request) +
			     rng_below(g, (uint32_t)(m->n - 40))] = 0;
		break;
	case 5:
		if (m->n >= sizeof(struct ls_request))
			shift_length(g, m);
		break;
	default:                                            /* a bit flip */
		if (m->n)
			m->b[rng_below(g, (uint32_t)m->n)] ^=
				(unsigned char)(1u << rng_below(g, 8));
	}
}

void fz_random(struct rng *g, struct fz_msg *m)
{
	uint32_t pick = rng_below(g, 4);
	m->n = pick == 0 ? rng_below(g, 64) : pick == 1 ? rng_below(g, 4096)
		: pick == 2 ? rng_below(g, FZ_MSG_MAX + 1) : 40;
	for (size_t i = 0; i < m->n; i++)
		m->b[i] = (unsigned char)rng_next(g);
	if (m->n >= 8 && rng_below(g, 2)) {     /* a header that reads well */
		put32(m, 0, LS_MAGIC);
		m->b[4] = LS_VERSION;
		m->b[5] = 0;
	}
}

/* ---- descriptors ------------------------------------------------------ */

/* One new descriptor of kind k, or -1. */
static int one_fd(unsigned k, int conn)
{
	int p[2];
	switch (k) {
	case 0: case 1:
		if (pipe2(p, O_CLOEXEC) < 0)
			return -1;
		close(p[!k]);
		return p[k];
	case 2:
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p) < 0)
			return -1;
		close(p[1]);
		return p[0];
	case 3: return open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	case 4: return open("/dev/null", O_RDWR | O_CLOEXEC);
	case 5: return open(".", O_PATH | O_CLOEXEC);
	case 6: return eventfd(0, EFD_CLOEXEC);
	case 7: return memfd_create("fuzz", MFD_CLOEXEC);
	case 8: return epoll_create1(EPOLL_CLOEXEC);
	default: return fcntl(conn, F_DUPFD_CLOEXEC, 0);   /* its own socket */
	}
}

int fz_fds(struct rng *g, int conn, int *fds, int max)
{
	uint32_t pick = rng_below(g, 8);
	int n = pick < 5 ? 0 : pick == 5 ? 1 : pick == 6 ? 1 + (int)rng_below(g, 8)
		: (int)rng_below(g, (uint32_t)max) + 1;
	int made = 0;
	for (int i = 0; i < n && i < max; i++) {
		/* many: a few objects, then copies of them */
		int fd = i < 10 ? one_fd(rng_below(g, 10), conn)
				: fcntl(fds[rng_below(g, (uint32_t)made)],
					F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			break;
		fds[made++] = fd;
	}
	return made;
}

void fz_fds_close(const int *fds, int n)
{
	for (int i = 0; i < n; i++)
		close(fds[i]);
}

double fz_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}
