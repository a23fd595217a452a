/*
 * ops-bench - the measuring half of test/bench/perf.sh (issue 10): single
 * mount operations, util-linux as whole processes, concurrent clients and
 * idle processes.  perf.sh runs each variant natively (in a private mount
 * namespace of its own) and through libshare.so (LD_PRELOAD, a broker under
 * the legacy simulation), alternating, and prints the ratios of the medians.
 * A benchmark, not a test: it only prints.
 *
 *   ops-bench single KIND UMOUNT N DIR  N times: a mount of KIND (bind: of
 *                           DIR/src; tmpfs) on DIR/t, then its umount2 with
 *                           UMOUNT (0, or detach: MNT_DETACH); each timed
 *   ops-bench exec KIND N DIR           the same with util-linux mount(8)
 *                           and umount(8) run as whole processes
 *   ops-bench tput C SECS DIR           C clients, each bind+umount pairs on
 *                           DIR/cI for SECS seconds; pairs per second
 *   ops-bench idle K                    K processes that sleep until this
 *                           one is killed (the "other processes" of item 4)
 *   ops-bench fan N DIR REC             N receivers of DIR (REC/jI, binds
 *                           of DIR made slaves: setup, per call), then a
 *                           bind on DIR/t that each receives and its
 *                           umount2; then the user-space floor: N plain
 *                           bind mount(2) onto REC/jI/t and N umount2,
 *                           from as many threads at once as the broker
 *                           uses (FLOOR_THREADS, default 16: umounts.c),
 *                           and from one (floor_umount_seq)
 *
 * Each begins by marking DIR shared (the kernel's own propagation, or the
 * broker's) so that every mount lands on a shared mount with no receivers.
 * Output: one line of "name value" pairs, times in ns per operation.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int die(const char *what)
{
	fprintf(stderr, "ops-bench: %s: %s\n", what, strerror(errno));
	return 1;
}

/* DIR shared, with DIR/src and DIR/t to mount from and on. */
static int prep(const char *dir, char *src, char *t, size_t size)
{
	snprintf(src, size, "%s/src", dir);
	snprintf(t, size, "%s/t", dir);
	if (mount(NULL, dir, NULL, MS_SHARED, NULL) < 0)
		return die("make-shared");
	if ((mkdir(src, 0755) < 0 && errno != EEXIST) ||
	    (mkdir(t, 0755) < 0 && errno != EEXIST))
		return die("mkdir");
	return 0;
}

static int do_mount(const char *kind, const char *src, const char *t)
{
	if (strcmp(kind, "bind") == 0)
		return mount(src, t, NULL, MS_BIND, NULL);
	return mount("bench", t, "tmpfs", 0, "size=64k");
}

static int single(const char *kind, const char *how, long n, const char *dir)
{
	char src[4096], t[4096];
	int flags = strcmp(how, "detach") == 0 ? MNT_DETACH : 0;
	double m = 0, u = 0;

	if (prep(dir, src, t, sizeof src))
		return 1;
	for (long i = 0; i < n; i++) {
		double t0 = now_ns();
		if (do_mount(kind, src, t) < 0)
			return die("mount");
		double t1 = now_ns();
		if (umount2(t, flags) < 0)
			return die("umount2");
		m += t1 - t0;
		u += now_ns() - t1;
	}
	printf("mount %.0f umount %.0f\n", m / n, u / n);
	return 0;
}

/* Runs argv as a process; its exit status, or -1. */
static int run(char *const argv[])
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int whole(const char *kind, long n, const char *dir)
{
	char src[4096], t[4096];
	char *bind[] = { "mount", "--bind", src, t, NULL };
	char *tmpfs[] = { "mount", "-t", "tmpfs", "bench", t, NULL };
	char *um[] = { "umount", t, NULL };
	double m = 0, u = 0;

	if (prep(dir, src, t, sizeof src))
		return 1;
	for (long i = 0; i < n; i++) {
		double t0 = now_ns();
		if (run(strcmp(kind, "bind") == 0 ? bind : tmpfs) != 0)
			return die("mount(8)");
		double t1 = now_ns();
		if (run(um) != 0)
			return die("umount(8)");
		m += t1 - t0;
		u += now_ns() - t1;
	}
	printf("mount %.0f umount %.0f\n", m / n, u / n);
	return 0;
}

/* One client of tput: pairs on its own place until the deadline. */
static long client(const char *src, const char *dir, int i, double until)
{
	char t[4096];
	long pairs = 0;

	snprintf(t, sizeof t, "%s/c%d", dir, i);
	if (mkdir(t, 0755) < 0 && errno != EEXIST)
		return -1;
	while (now_ns() < until) {
		if (mount(src, t, NULL, MS_BIND, NULL) < 0 || umount2(t, 0) < 0)
			return -1;
		pairs++;
	}
	return pairs;
}

static int tput(int c, double secs, const char *dir)
{
	char src[4096], t[4096];
	int fds[2], st;
	long total = 0, one;

	if (prep(dir, src, t, sizeof src) || pipe(fds) < 0)
		return 1;
	double t0 = now_ns(), until = t0 + secs * 1e9;
	for (int i = 0; i < c; i++)
		if (fork() == 0) {
			one = client(src, dir, i, until);
			_exit(write(fds[1], &one, sizeof one) == sizeof one ? 0 : 1);
		}
	close(fds[1]);
	while (read(fds[0], &one, sizeof one) == sizeof one)
		total += one < 0 ? 0 : one;
	double t1 = now_ns();
	while (wait(&st) > 0)
		;
	printf("pairs/s %.1f pairs %ld\n", total / ((t1 - t0) / 1e9), total);
	return 0;
}

/* K children asleep; they die with this process (SIGKILL from perf.sh). */
static int idle(long k)
{
	for (long i = 0; i < k; i++) {
		pid_t pid = fork();
		if (pid < 0)
			return die("fork");
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			pause();
			_exit(0);
		}
	}
	printf("ready %ld\n", k);
	fflush(stdout);
	for (;;)
		pause();
}

/* N receivers of dir under rec: a bind of dir made its slave each. */
static double receivers(long n, const char *dir, const char *rec)
{
	char j[4096];
	double t0 = now_ns();

	for (long i = 0; i < n; i++) {
		snprintf(j, sizeof j, "%s/j%ld", rec, i);
		if ((mkdir(j, 0755) < 0 && errno != EEXIST) ||
		    mount(dir, j, NULL, MS_BIND, NULL) < 0 ||
		    mount(NULL, j, NULL, MS_SLAVE, NULL) < 0)
			return -1;
	}
	return (now_ns() - t0) / (2 * n);
}

/* The floor's umount2 calls, shared by threads: each takes the next. */
static struct {
	pthread_mutex_t mu;
	long next, n, failed;
	const char *rec;
} fl = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void *floor_umounts(void *arg)
{
	char j[4096];

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&fl.mu);
		long i = fl.next++;
		pthread_mutex_unlock(&fl.mu);
		if (i >= fl.n)
			return NULL;
		snprintf(j, sizeof j, "%s/j%ld/t", fl.rec, i);
		if (umount2(j, 0) < 0)
			__atomic_add_fetch(&fl.failed, 1, __ATOMIC_RELAXED);
	}
}

/* N plain binds of src onto rec/jI/t, then N umount2 from k threads:
 * one syscall per copy, what no executor can go below. */
static int floor_pass(long n, const char *src, const char *rec, int k,
		      double *m, double *u)
{
	char j[4096];
	pthread_t t[64];
	double t0 = now_ns();

	for (long i = 0; i < n; i++) {
		snprintf(j, sizeof j, "%s/j%ld/t", rec, i);
		if (mount(src, j, NULL, MS_BIND, NULL) < 0)
			return die("floor mount");
	}
	double t1 = now_ns();
	fl.next = 0, fl.n = n, fl.rec = rec, fl.failed = 0;
	for (int i = 1; i < k; i++)
		if (pthread_create(&t[i], NULL, floor_umounts, NULL))
			return die("pthread_create");
	floor_umounts(NULL);
	for (int i = 1; i < k; i++)
		pthread_join(t[i], NULL);
	if (fl.failed)
		return die("floor umount2");
	*m = (t1 - t0) / n;
	*u = (now_ns() - t1) / n;
	return 0;
}

/* The floor with the broker's parallelism, and with none. */
static int floor_of(long n, const char *src, const char *rec, double *m,
		    double *u, double *useq)
{
	const char *e = getenv("FLOOR_THREADS");
	int k = e ? atoi(e) : 16;
	double mseq;

	k = k < 1 ? 1 : k > 64 ? 64 : k;
	return floor_pass(n, src, rec, 1, &mseq, useq) ||
	       floor_pass(n, src, rec, k, m, u);
}

static int fan(long n, const char *dir, const char *rec)
{
	char src[4096], t[4096], j[4096];
	double setup, m, u, fm = 0, fu = 0, fus = 0;

	if (prep(dir, src, t, sizeof src))
		return 1;
	if ((setup = receivers(n, dir, rec)) < 0)
		return die("receivers");
	double t0 = now_ns();
	if (mount(src, t, NULL, MS_BIND, NULL) < 0)
		return die("mount");
	double t1 = now_ns();
	if (umount2(t, 0) < 0)
		return die("umount2");
	m = t1 - t0;
	u = now_ns() - t1;
	int err = floor_of(n, src, rec, &fm, &fu, &fus);
	for (long i = 0; i < n; i++) {
		snprintf(j, sizeof j, "%s/j%ld", rec, i);
		umount2(j, MNT_DETACH);
	}
	printf("setup %.0f mount %.0f umount %.0f floor_mount %.0f "
	       "floor_umount %.0f floor_umount_seq %.0f\n", setup, m, u, fm,
	       fu, fus);
	return err;
}

int main(int argc, char **argv)
{
	if (argc == 6 && strcmp(argv[1], "single") == 0)
		return single(argv[2], argv[3], atol(argv[4]), argv[5]);
	if (argc == 5 && strcmp(argv[1], "exec") == 0)
		return whole(argv[2], atol(argv[3]), argv[4]);
	if (argc == 5 && strcmp(argv[1], "tput") == 0)
		return tput(atoi(argv[2]), atof(argv[3]), argv[4]);
	if (argc == 3 && strcmp(argv[1], "idle") == 0)
		return idle(atol(argv[2]));
	if (argc == 5 && strcmp(argv[1], "fan") == 0)
		return fan(atol(argv[2]), argv[3], argv[4]);
	fprintf(stderr, "usage: ops-bench single bind|tmpfs 0|detach N DIR | "
		"exec bind|tmpfs N DIR | tput C SECS DIR | idle K | "
		"fan N DIR REC\n");
	return 2;
}
