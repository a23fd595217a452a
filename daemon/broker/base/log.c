/* log.c: the broker's messages, to standard error, a file of its own, or
 * syslog. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "base/log.h"
#include "libshare_proto.h"

enum sink { TO_STDERR, TO_FILE, TO_SYSLOG };

static enum sink sink;
static bool debugging;
static char file[PATH_MAX];    /* TO_FILE: its name, for log_reopen() */

void log_setup(bool to_syslog, bool debug)
{
	if (to_syslog && sink != TO_SYSLOG)
		openlog("sharebrokerd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
	else if (!to_syslog && sink == TO_SYSLOG)
		closelog();
	sink = to_syslog ? TO_SYSLOG : TO_STDERR;
	debugging = debug;
}

/* path opened for appending onto descriptors 1 and 2. */
static int onto_stdio(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	if (fd < 0)
		return -errno;
	if (dup2(fd, 1) < 0 || dup2(fd, 2) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	close(fd);
	return 0;
}

int log_open(const char *where, bool debug)
{
	int err;
	if (strcmp(where, "syslog") == 0 || strcmp(where, "stderr") == 0) {
		log_setup(where[1] == 'y', debug);
		return 0;
	}
	if (where[0] != '/' || strlen(where) >= sizeof file)
		return -EINVAL;
	if ((err = onto_stdio(where)) < 0)
		return err;
	log_setup(false, debug);
	strcpy(file, where);
	sink = TO_FILE;
	return 0;
}

int log_reopen(void)
{
	if (sink == TO_SYSLOG) {
		closelog();
		openlog("sharebrokerd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
	}
	return sink == TO_FILE ? onto_stdio(file) : 0;
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;
	if (level == LOG_DEBUG && !debugging)
		return;
	va_start(ap, fmt);
	if (sink == TO_SYSLOG) {
		vsyslog(level, fmt, ap);
	} else {
		char stamp[32] = "";
		time_t now = time(NULL);
		struct tm tm;
		/* a file outlives the terminal: each line says when, and who */
		if (sink == TO_FILE && localtime_r(&now, &tm))
			strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S ", &tm);
		flockfile(stderr);     /* a line whole, whichever thread */
		fprintf(stderr, "%ssharebrokerd", stamp);
		if (sink == TO_FILE)
			fprintf(stderr, "[%d]", (int)getpid());
		fputs(": ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
		funlockfile(stderr);
	}
	va_end(ap);
}

/* An errno as "EPERM (Operation not permitted)". */
static const char *errno_text(int err, char *buf, size_t size)
{
	const char *name = NULL;
#ifdef HAVE_STRERRORNAME_NP
	name = strerrorname_np(err);
#endif
	if (name)
		snprintf(buf, size, "%s (%s)", name, strerror(err));
	else
		snprintf(buf, size, "errno %d (%s)", err, strerror(err));
	return buf;
}

/* each serving thread's request (door/loop.c) */
static __thread struct timespec since;  /* the last phase change */
static __thread enum phase running;
static __thread unsigned long long spent[PHASES];   /* ns, this request */

static unsigned long long ns_since(struct timespec *last)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	unsigned long long d = (unsigned long long)(t.tv_sec - last->tv_sec) *
			       1000000000ull + (unsigned long long)t.tv_nsec -
			       (unsigned long long)last->tv_nsec;
	*last = t;
	return d;
}

void phase_begin(void)
{
	memset(spent, 0, sizeof spent);
	running = PHASE_IDENTIFY;
	clock_gettime(CLOCK_MONOTONIC, &since);
}

enum phase phase(enum phase now)
{
	enum phase was = running;
	spent[running] += ns_since(&since);
	running = now;
	return was;
}

/* ", 123 us: identify 1, resolve 2, plan 3, execute 4, persist 5" */
static const char *timing(char *buf, size_t size)
{
	static const char *const name[PHASES] = { "identify", "resolve",
		"plan", "execute", "persist" };
	unsigned long long all = 0;
	size_t n;
	phase(running);
	for (int i = 0; i < PHASES; i++)
		all += spent[i];
	n = (size_t)snprintf(buf, size, ", %llu us:", all / 1000);
	for (int i = 0; i < PHASES && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s %s %llu",
				      i ? "," : "", name[i], spent[i] / 1000);
	return buf;
}

void log_request(unsigned op, pid_t pid, int rootfd, int err)
{
	char proc[64], root[PATH_MAX] = "?", why[128], t[160] = "";
	ssize_t n;
	if (err < 0)
		err = -err;
	if (!err && !debugging)
		return;
	if (debugging)
		timing(t, sizeof t);
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", rootfd);
	if (rootfd >= 0 && (n = readlink(proc, root, sizeof root - 1)) > 0)
		root[n] = '\0';
	if (err)
		log_msg(LOG_INFO, "refused %s from pid %d (root %s): %s%s",
			ls_op_name(op), (int)pid, root,
			errno_text(err, why, sizeof why), t);
	else
		log_msg(LOG_DEBUG, "%s from pid %d (root %s): ok%s",
			ls_op_name(op), (int)pid, root, t);
}
