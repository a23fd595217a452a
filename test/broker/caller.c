/* caller: mount(2) and umount2(2) called the way programs call them,
 * printing each result, for the bats tests of test/broker/.  Run it with
 * the shim (LD_PRELOAD) to go through the broker, or without it to see
 * what the kernel itself answers.
 *
 *   caller [OPTION]... STEP...
 *
 * Options, applied in this order whatever their order on the line:
 *   --open PATH      open PATH (O_RDONLY|O_DIRECTORY) first; "%f" in the
 *                    steps becomes its descriptor number (before a chroot,
 *                    so it points outside the jail)
 *   --chroot DIR     chroot(DIR) through libc (the shim sees it), chdir("/")
 *   --chdir DIR      then chdir(DIR)
 *   --uid N          then drop to uid and gid N, no groups, no capabilities
 *   --fsuid N        or keep root but check files as uid and gid N
 *                    (setfsuid: the filesystem capabilities go with it)
 *   --thread-cwd DIR then start a thread that takes a cwd of its own
 *                    (unshare CLONE_FS) in DIR and sleeps: a use of DIR's
 *                    mount that /proc/PID/cwd does not show
 *   --own-cwd DIR    run the steps in a thread that takes a cwd of its own
 *                    in DIR, the main thread's staying where it is
 *   --raw            steps call syscall(SYS_mount / SYS_umount2) instead of
 *                    the libc functions
 *   --threads N      run the steps in N threads at once
 *   --fork           run the steps in the parent and in a fork()ed child
 *   --vfork          run the steps in a vfork()ed child, then in the parent
 *   --repeat N       every worker runs the steps N times
 *   --warm           first one call the shim forwards (umount of a name
 *                    that is nowhere: ENOENT), so that the connection it
 *                    keeps is open before the workers start
 *   --closefds FILE  close every descriptor (close_range) before the steps;
 *                    the results go to FILE (opened afterwards) instead of
 *                    standard output
 * Steps:
 *   mount SRC TGT TYPE FLAGS [DATA]   SRC, TYPE, DATA "-" for NULL
 *   umount TGT FLAGS
 *   swap A B SECONDS   exchange A and B (renameat2 RENAME_EXCHANGE) in a
 *                      tight loop: the racer of the symlink-swap test
 *   sleep SECONDS      (a process that holds its cwd and root somewhere)
 *   pivot NEW OLD      pivot_root(NEW, OLD) through syscall(), as
 *                      pivot_root(8) calls it: "pivot_root NEW OLD = RESULT"
 *   ls DIR             "ls DIR = NAME..." (sorted, without . and ..), or the
 *                      errno name: what this process sees there
 *   cat FILE           "cat FILE = FIRST-LINE", or the errno name
 *   cwd                "cwd = PATH" from getcwd(3), or the errno name
 *   euid N             seteuid(N): "euid N = RESULT"
 * FLAGS: a number, or names joined by "," (bind rec move remount rdonly
 * private slave shared unbindable / detach force expire nofollow).
 * In paths, "%t" is the worker (thread number; parent 0, child 1), "%p"
 * the pid, "%f" the --open descriptor.
 *
 * Output: one line per step, "[W ]mount TGT = RESULT" with RESULT 0 or the
 * errno name (a worker prefix W only with --threads, --fork or --vfork).
 * Exit status: 0 when every step ran (whatever it returned), 2 usage,
 * 125 when an option could not be applied.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <sys/fsuid.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "caller.h"

#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW 256
#endif

static struct {
	const char *open_path, *root, *dir, *out, *thread_cwd, *own_cwd;
	long uid, fsuid;
	bool raw, fork, vfork, warm;
	int threads, repeat, fd;
	char **steps;
	int nsteps;
} opt = { .uid = -1, .fsuid = -1, .threads = 0, .repeat = 1, .fd = -1 };

static char results[1 << 16];  /* --closefds: collected here */
static size_t nresults;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void usage(void)
{
	fputs("usage: caller [--open PATH] [--chroot DIR] [--chdir DIR] "
	      "[--uid N] [--thread-cwd DIR] [--own-cwd DIR] [--raw] [--threads N | --fork | --vfork] [--repeat N] [--warm] "
	      "[--closefds FILE] STEP...\n", stderr);
	exit(2);
}

void die(const char *what)
{
	fprintf(stderr, "caller: %s: %s\n", what, strerror(errno));
	exit(125);
}

const char *err_name(int e)
{
	return e ? strerrorname_np(e) : "0";
}

static unsigned long flags_of(const char *s)
{
	static const struct { const char *name; unsigned long f; } t[] = {
		{ "bind", MS_BIND }, { "rec", MS_REC }, { "move", MS_MOVE },
		{ "remount", MS_REMOUNT }, { "rdonly", MS_RDONLY },
		{ "private", MS_PRIVATE }, { "slave", MS_SLAVE },
		{ "shared", MS_SHARED }, { "unbindable", MS_UNBINDABLE },
		{ "detach", MNT_DETACH }, { "force", MNT_FORCE },
		{ "expire", MNT_EXPIRE }, { "nofollow", UMOUNT_NOFOLLOW },
	};
	unsigned long f = 0;
	char *copy = strdup(s), *save = NULL;
	for (char *w = strtok_r(copy, ",", &save); w;
	     w = strtok_r(NULL, ",", &save)) {
		size_t i = 0;
		while (i < sizeof t / sizeof *t && strcmp(w, t[i].name) != 0)
			i++;
		f |= i < sizeof t / sizeof *t ? t[i].f : strtoul(w, NULL, 0);
	}
	free(copy);
	return f;
}

/* s with %t, %p and %f expanded; "-" is NULL. */
static char *expand(const char *s, int worker)
{
	char *out, *p;
	if (strcmp(s, "-") == 0)
		return NULL;
	out = p = malloc(strlen(s) * 8 + 32);
	for (; *s; s++) {
		if (s[0] == '%' && s[1] == 't')
			p += sprintf(p, "%d", worker), s++;
		else if (s[0] == '%' && s[1] == 'p')
			p += sprintf(p, "%d", (int)getpid()), s++;
		else if (s[0] == '%' && s[1] == 'f')
			p += sprintf(p, "%d", opt.fd), s++;
		else
			*p++ = *s;
	}
	*p = '\0';
	return out;
}

void report(int worker, const char *fmt, ...)
{
	char line[4300];
	int n = 0;
	va_list ap;
	if (worker >= 0)
		n = snprintf(line, sizeof line, "%d ", worker);
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof line - 1)
		n = (int)sizeof line - 2;
	line[n++] = '\n';
	if (!opt.out) {        /* one write: lines of workers do not mix */
		if (write(1, line, (size_t)n) < 0)
			_exit(125);
		return;
	}
	pthread_mutex_lock(&lock);
	if (nresults + (size_t)n <= sizeof results) {
		memcpy(results + nresults, line, (size_t)n);
		nresults += (size_t)n;
	}
	pthread_mutex_unlock(&lock);
}

static int do_mount(char *a[5])
{
	unsigned long f = flags_of(a[3] ? a[3] : "0");
	long rc = opt.raw ? syscall(SYS_mount, a[0], a[1], a[2], f, a[4])
			  : mount(a[0], a[1], a[2], f, a[4]);
	return rc < 0 ? errno : 0;
}

static int do_umount(char *a[2])
{
	int f = (int)flags_of(a[1] ? a[1] : "0");
	long rc = opt.raw ? syscall(SYS_umount2, a[0], f) : umount2(a[0], f);
	return rc < 0 ? errno : 0;
}

/* Verbs that end a mount step without DATA. */
static bool is_verb(const char *s)
{
	return strcmp(s, "mount") == 0 || strcmp(s, "umount") == 0 ||
	       strcmp(s, "pivot") == 0 || strcmp(s, "ls") == 0 ||
	       strcmp(s, "cat") == 0 || strcmp(s, "cwd") == 0 ||
	       strcmp(s, "euid") == 0;
}

/* One pass over the steps; worker -1 when there is only one. */
static void run_steps(int worker)
{
	for (int i = 0; i < opt.nsteps; ) {
		const char *verb = opt.steps[i++];
		int want = strcmp(verb, "mount") == 0 ? 5 :
			   strcmp(verb, "umount") == 0 ? 2 :
			   strcmp(verb, "swap") == 0 ? 3 :
			   strcmp(verb, "sleep") == 0 ? 1 :
			   strcmp(verb, "pivot") == 0 ? 2 :
			   strcmp(verb, "ls") == 0 ? 1 :
			   strcmp(verb, "cat") == 0 ? 1 :
			   strcmp(verb, "euid") == 0 ? 1 :
			   strcmp(verb, "cwd") == 0 ? 0 : -1;
		char *a[5] = { 0 };
		if (want < 0)
			usage();
		for (int k = 0; k < want && i < opt.nsteps; k++) {
			/* DATA is optional: stop at the next verb */
			if (want == 5 && k == 4 && is_verb(opt.steps[i]))
				break;
			a[k] = expand(opt.steps[i++], worker);
		}
		if (strcmp(verb, "sleep") == 0)
			sleep((unsigned)atoi(a[0] ? a[0] : "0"));
		else if (strcmp(verb, "pivot") == 0)
			report(worker, "pivot_root %s %s = %s",
			       a[0] ? a[0] : "(null)", a[1] ? a[1] : "(null)",
			       err_name(syscall(SYS_pivot_root, a[0], a[1]) < 0 ?
					errno : 0));
		else if (strcmp(verb, "ls") == 0)
			list_dir(worker, a[0] ? a[0] : ".");
		else if (strcmp(verb, "cat") == 0)
			cat_file(worker, a[0] ? a[0] : "");
		else if (strcmp(verb, "cwd") == 0)
			show_cwd(worker);
		else if (strcmp(verb, "euid") == 0)
			report(worker, "euid %s = %s", a[0] ? a[0] : "0",
			       err_name(seteuid((uid_t)atol(a[0] ? a[0] : "0"))
					< 0 ? errno : 0));
		else if (verb[0] == 's')
			swap(a);
		else if (verb[0] == 'm')
			report(worker, "mount %s = %s", a[1] ? a[1] : "(null)",
			       err_name(do_mount(a)));
		else
			report(worker, "umount %s = %s", a[0] ? a[0] : "(null)",
			       err_name(do_umount(a)));
		for (int k = 0; k < 5; k++)
			free(a[k]);
	}
}

static void *worker_main(void *arg)
{
	int w = (int)(long)arg;
	for (int r = 0; r < opt.repeat; r++)
		run_steps(opt.threads || opt.fork || opt.vfork ? w : -1);
	return NULL;
}

static void *hold_cwd(void *arg)
{
	(void)arg;
	if (unshare(CLONE_FS) < 0 || chdir(opt.thread_cwd) < 0)
		die(opt.thread_cwd);
	write(1, "holding\n", 8);
	for (;;)
		pause();
	return NULL;
}

static void setup(void)
{
	pthread_t t;
	if (opt.open_path &&
	    (opt.fd = open(opt.open_path, O_RDONLY | O_DIRECTORY)) < 0)
		die(opt.open_path);
	if (opt.root && (chroot(opt.root) < 0 || chdir("/") < 0))
		die(opt.root);
	if (opt.dir && chdir(opt.dir) < 0)
		die(opt.dir);
	if (opt.uid >= 0 && (setgroups(0, NULL) < 0 ||
			     setresgid((gid_t)opt.uid, (gid_t)opt.uid,
				       (gid_t)opt.uid) < 0 ||
			     setresuid((uid_t)opt.uid, (uid_t)opt.uid,
				       (uid_t)opt.uid) < 0))
		die("drop privileges");
	if (opt.fsuid >= 0) {
		setfsgid((gid_t)opt.fsuid);
		setfsuid((uid_t)opt.fsuid);
		if (setfsuid((uid_t)-1) != (int)opt.fsuid)
			die("setfsuid");
	}
	if (opt.thread_cwd &&
	    (errno = pthread_create(&t, NULL, hold_cwd, NULL)))
		die("pthread_create");
	if (opt.out && syscall(SYS_close_range, 0U, ~0U, 0) < 0)
		die("close_range");
}

static void *own_cwd_main(void *arg)
{
	if (unshare(CLONE_FS) < 0 || chdir(opt.own_cwd) < 0)
		die(opt.own_cwd);
	return worker_main(arg);
}

static void run(void)
{
	if (opt.own_cwd) {
		pthread_t t;
		if ((errno = pthread_create(&t, NULL, own_cwd_main, NULL)))
			die("pthread_create");
		pthread_join(t, NULL);
	} else if (opt.threads > 0) {
		pthread_t t[MAXTHREADS];
		if (opt.threads > MAXTHREADS)
			opt.threads = MAXTHREADS;
		for (int i = 0; i < opt.threads; i++)
			if ((errno = pthread_create(&t[i], NULL, worker_main,
						    (void *)(long)i)))
				die("pthread_create");
		for (int i = 0; i < opt.threads; i++)
			pthread_join(t[i], NULL);
	} else if (opt.fork || opt.vfork) {
		int status;
		pid_t pid = opt.vfork ? vfork() : fork();
		if (pid < 0)
			die("fork");
		if (pid == 0) {
			worker_main((void *)1L);
			_exit(0);
		}
		if (opt.fork)   /* concurrently with the child */
			worker_main((void *)0L);
		if (waitpid(pid, &status, 0) < 0 || status != 0)
			die("child");
		if (opt.vfork)  /* the vfork child ran alone first */
			worker_main((void *)0L);
	} else {
		worker_main((void *)0L);
	}
}

int main(int argc, char **argv)
{
	int i = 1;
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		const char *o = argv[i] + 2, *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(o, "raw") == 0) { opt.raw = true; continue; }
		if (strcmp(o, "fork") == 0) { opt.fork = true; continue; }
		if (strcmp(o, "vfork") == 0) { opt.vfork = true; continue; }
		if (strcmp(o, "warm") == 0) { opt.warm = true; continue; }
		if (!v)
			usage();
		i++;
		if (strcmp(o, "open") == 0) opt.open_path = v;
		else if (strcmp(o, "chroot") == 0) opt.root = v;
		else if (strcmp(o, "chdir") == 0) opt.dir = v;
		else if (strcmp(o, "uid") == 0) opt.uid = atol(v);
		else if (strcmp(o, "fsuid") == 0) opt.fsuid = atol(v);
		else if (strcmp(o, "threads") == 0) opt.threads = atoi(v);
		else if (strcmp(o, "repeat") == 0) opt.repeat = atoi(v);
		else if (strcmp(o, "closefds") == 0) opt.out = v;
		else if (strcmp(o, "thread-cwd") == 0) opt.thread_cwd = v;
		else if (strcmp(o, "own-cwd") == 0) opt.own_cwd = v;
		else usage();
	}
	opt.steps = argv + i;
	opt.nsteps = argc - i;
	if (!opt.nsteps)
		usage();
	setup();
	if (opt.warm)
		umount2("/.caller-warm-nowhere", 0);
	run();
	if (opt.out) {
		int fd = open(opt.out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			      0644);
		if (fd < 0 || write(fd, results, nresults) != (ssize_t)nresults)
			_exit(125);
		close(fd);
	}
	return 0;
}
