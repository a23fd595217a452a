/* sharebrokerd: the root-side broker.  Setup, then the server loop.
 *
 *   sharebrokerd [--socket ADDR] [--state-dir DIR] [--foreground] [--debug]
 *
 * Without --foreground it returns once it accepts requests (exit 0), or
 * fails with a message (exit 1).  SIGTERM, SIGINT or `sharectl stop` end
 * it; every mount stays where it is.  --mount-table FILE imports FILE
 * (mountinfo, or mounts format when its name ends in /mounts) instead of
 * /proc/self/mountinfo: the tests' way to exercise the old kernels' path.
 * --max-mounts N limits the mounts as fs.mount-max does (its value is the
 * default).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker.h"
#include "libshare_proto.h"

static struct broker *the_broker;  /* for the signal handler only */

/* The kernel's limit on mounts per namespace (fs.mount-max). */
static unsigned mount_max(void)
{
	unsigned n = 0;
	FILE *f = fopen("/proc/sys/fs/mount-max", "re");
	if (f) {
		if (fscanf(f, "%u", &n) != 1)
			n = 0;
		fclose(f);
	}
	return n;
}

static void on_term(int sig)
{
	(void)sig;
	the_broker->stop = true;
}

static void usage(FILE *out, int code)
{
	fprintf(out, "usage: sharebrokerd [--socket ADDR] [--state-dir DIR] "
		"[--foreground] [--debug] [--mount-table FILE]\n"
		"                    [--max-mounts N]\n");
	exit(code);
}

static char *sub(const char *dir, const char *name)
{
	char *p;
	if (asprintf(&p, "%s/%s", dir, name) < 0)
		exit(1);
	return p;
}

/* The broker's own places: staging and parking (see exec.c), emptied of
 * what an earlier broker left (statedir.c). */
static int make_dirs(struct broker *b)
{
	b->stage = sub(b->state_dir, "stage");
	b->park = sub(b->state_dir, "park");
	b->newroot = sub(b->state_dir, "newroot");
	return statedir_prepare(b) ?: newmount_reset(b);
}

/* Detaches; the parent exits 0 when the child writes "ok" on the pipe
 * (it accepts requests), 1 when the pipe closes without it. */
static int detach(int *ready)
{
	int p[2];
	char buf[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		close(p[1]);
		exit(read(p[0], buf, 2) == 2 ? 0 : 1);
	}
	close(p[0]);
	setsid();
	*ready = p[1];
	return 0;
}

static void quiet(const char *log)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int out = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (null >= 0)
		dup2(null, 0);
	if (out >= 0) {
		dup2(out, 1);
		dup2(out, 2);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "state-dir", required_argument, NULL, 'd' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "debug", no_argument, NULL, 'D' },
		{ "mount-table", required_argument, NULL, 't' },
		{ "max-mounts", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	static struct broker b;
	const char *addr = getenv(LS_SOCKET_ENV), *table = NULL;
	bool foreground = false;
	unsigned max = 0;
	int c, ready = -1, err;

	b.state_dir = "/run/libshare";
	b.staged = -1;
	bool debug = getenv("LIBSHARE_DEBUG") != NULL;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1)
		switch (c) {
		case 's': addr = optarg; break;
		case 'd': b.state_dir = optarg; break;
		case 'f': foreground = true; break;
		case 'D': debug = true; break;
		case 't': table = optarg; break;
		case 'm': max = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'h': usage(stdout, 0); break;
		default: usage(stderr, 2);
		}
	if (optind != argc)
		usage(stderr, 2);
	log_setup(false, debug);
	if (!addr || !*addr)
		addr = LS_SOCKET_DEFAULT;
	if (geteuid() != 0) {
		fprintf(stderr, "sharebrokerd: must run as root\n");
		return 1;
	}
	if ((err = make_dirs(&b)) < 0) {
		fprintf(stderr, "sharebrokerd: %s: %s\n", b.state_dir,
			strerror(-err));
		return 1;
	}
	graph_init(&b.g, max ? max : mount_max());
	b.ns = ns_new(&b.g);
	err = import_table(&b, table ? table : "/proc/self/mountinfo");
	if (err == -ENOENT && !table)  /* before 2.6.26 */
		err = import_table(&b, "/proc/mounts");
	if (err < 0) {
		if (err != -EEXIST)
			fprintf(stderr, "sharebrokerd: cannot import the mount "
				"table: %s\n", strerror(-err));
		return 1;
	}
	if ((err = state_load(&b)) < 0)
		fprintf(stderr, "sharebrokerd: %s/state: %s\n", b.state_dir,
			strerror(-err));
	b.watch = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if ((b.listen_fd = server_listen(addr)) < 0) {
		fprintf(stderr, "sharebrokerd: %s: %s\n", addr,
			b.listen_fd == -EADDRINUSE ?
			"a broker is already listening" :
			strerror(-b.listen_fd));
		return 1;
	}
	if (!foreground && detach(&ready) < 0)
		return 1;

	the_broker = &b;
	struct sigaction sa = { .sa_handler = on_term };  /* no SA_RESTART */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (chdir("/") < 0)
		return 1;
	if (ready >= 0) {
		char *log = sub(b.state_dir, "sharebrokerd.log");
		quiet(log);
		free(log);
		if (write(ready, "ok", 2) != 2)
			return 1;
		close(ready);
	}
	server_loop(&b);
	close(b.listen_fd);
	return 0;
}
