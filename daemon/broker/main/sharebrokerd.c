/* sharebrokerd: the root-side broker.  Setup, then the server loop.
 *
 *   sharebrokerd [--config FILE] [--socket ADDR] [--state-dir DIR]
 *                [--log WHERE] [--foreground] [--debug] [--max-mounts N]
 *                [--threads N] [--mount-table FILE] [--print-config]
 *
 * Settings come from the configuration file (config.c), which the command
 * line overrides.  Without --foreground it returns once it accepts
 * requests (exit 0), or fails with a message (exit 1; 2 for a usage or
 * configuration error).  SIGTERM, SIGINT or `sharectl stop` end it; every
 * mount stays where it is.  --mount-table FILE imports FILE (mountinfo,
 * or mounts format if named .../mounts), the old kernels' path; --no-fuse
 * serves snapshots, as without FUSE (fusetab.c).  See sharebrokerd(8).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker.h"
#include "base/base.h"
#include "door/door.h"
#include "exec/exec.h"
#include "hold/hold.h"
#include "hold/holder.h"
#include "main/admin.h"
#include "main/config.h"
#include "main/pidfile.h"
#include "ns/ns.h"
#include "persist/persist.h"
#include "tab/tab.h"

/* What the command line said, kept for SIGHUP: the file is read again and
 * the command line still overrides it. */
struct setup {
	struct config cli, cfg;
	const char *file;      /* the configuration file */
	bool file_given;       /* --config: a missing file is an error */
	bool foreground, print;
	bool no_fuse;          /* --no-fuse: mount tables as snapshots */
	const char *table;     /* --mount-table */
	struct pidfile pid;
};

static struct setup the_setup;   /* for reload(), called from admin_tick */
enum { EXIT_FAIL = 1, EXIT_USAGE = 2 };

static void die(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
static void die(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("sharebrokerd: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(code);
}

static void usage(FILE *out, int code)
{
	fprintf(out,
"usage: sharebrokerd [OPTION]...\n"
"The broker of libshare: mount propagation for chroot jails (sharebrokerd(8)).\n"
"\n"
"  -c, --config FILE      settings file (default %s)\n"
"      --socket ADDR      listen on ADDR: @NAME (abstract) or /PATH\n"
"                         (default $LIBSHARE_SOCKET, else %s)\n"
"      --state-dir DIR    pidfile, lock, staging and saved state (default %s)\n"
"      --log WHERE        syslog, stderr or an absolute FILE (default: syslog\n"
"                         once detached, stderr with --foreground)\n"
"      --foreground       do not detach\n"
"      --debug            log every request\n"
"      --max-mounts N     the mount limit (default: the kernel's fs.mount-max)\n"
"      --threads N        serving threads, 1 to 8 (default: CPUs, up to 4)\n"
"      --mount-table FILE import FILE instead of /proc/self/mountinfo\n"
"      --print-config     print the settings in effect and exit\n"
"      --no-fuse          serve mount tables as snapshot files, as on a\n"
"                         kernel without FUSE\n"
"  -h, --help             this help\n"
"  -V, --version          the version\n"
"\n"
"Exit status: 0 started (or stopped cleanly), 1 failure, 2 usage or\n"
"configuration error.  Report bugs to <%s>.\n",
		LS_CONFIG_FILE, LS_SOCKET_DEFAULT, LS_STATE_DIR,
		PACKAGE_BUGREPORT);
	exit(code);
}

/* key = value from the command line or the environment (named by from). */
static void set_cli(struct setup *s, const char *from, const char *key,
		    const char *value)
{
	char why[PATH_MAX + 200];
	if (config_set(&s->cli, key, value, why, sizeof why) < 0)
		die(EXIT_USAGE, "%s %s", from, why);
}

static void parse(struct setup *s, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "state-dir", required_argument, NULL, 'd' },
		{ "log", required_argument, NULL, 'l' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "debug", no_argument, NULL, 'D' },
		{ "max-mounts", required_argument, NULL, 'm' },
		{ "threads", required_argument, NULL, 'T' },
		{ "mount-table", required_argument, NULL, 't' },
		{ "print-config", no_argument, NULL, 'P' },
		{ "no-fuse", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	const char *env;
	int c, i;
	config_init(&s->cli);
	s->file = LS_CONFIG_FILE;
	while ((c = getopt_long(argc, argv, "c:hV", opts, &i)) != -1) {
		const char *opt = c == 'c' ? "--config" : NULL;
		char from[64];
		if (!opt)
			snprintf(from, sizeof from, "--%s", opts[i].name);
		switch (c) {
		case 'c': s->file = optarg; s->file_given = true; break;
		case 's': set_cli(s, from, "socket", optarg); break;
		case 'd': set_cli(s, from, "state-dir", optarg); break;
		case 'l': set_cli(s, from, "log", optarg); break;
		case 'f': s->foreground = true; break;
		case 'D': s->cli.debug = 1; break;
		case 'm': set_cli(s, from, "max-mounts", optarg); break;
		case 'T': set_cli(s, from, "threads", optarg); break;
		case 't': s->table = optarg; break;
		case 'P': s->print = true; break;
		case 'n': s->no_fuse = true; break;
		case 'h': usage(stdout, 0); break;
		case 'V': printf("sharebrokerd (%s) %s\n", PACKAGE_NAME,
				 PACKAGE_VERSION), exit(0);
		default: usage(stderr, EXIT_USAGE);
		}
	}
	if (optind != argc)
		die(EXIT_USAGE, "unexpected argument '%s' (see --help)",
		    argv[optind]);
	/* an empty variable is how a shell unsets one (ls_socket_name) */
	if (!*s->cli.socket && (env = getenv(LS_SOCKET_ENV)) && *env)
		set_cli(s, LS_SOCKET_ENV, "socket", env);
	if (s->cli.debug < 0 && getenv("LIBSHARE_DEBUG"))
		s->cli.debug = 1;
}

/* The file, then the command line over it, into s->cfg; 0, or -EINVAL
 * with the reason in why. */
static int load(struct setup *s, char *why, size_t size)
{
	struct config file;
	int err;
	config_init(&file);
	err = config_read(&file, s->file, why, size);
	if (err == -ENOENT && !s->file_given)
		err = 0;               /* no file: the defaults */
	if (err < 0)
		return err;
	config_merge(&s->cfg, &s->cli, &file);
	return 0;
}

/* The state directory, locked: a second broker refuses here, before it
 * touches the first one's staging and parking places. */
static void lock_state(struct broker *b, struct setup *s)
{
	pid_t holder;
	int err = pidfile_lock(&s->pid, b->state_dir, &holder);
	if (err == -EWOULDBLOCK && holder)
		die(EXIT_FAIL, "%s: a broker (pid %d) already uses this state "
		    "directory", b->state_dir, (int)holder);
	if (err == -EWOULDBLOCK)
		die(EXIT_FAIL, "%s: another broker, still starting, already "
		    "uses this state directory", b->state_dir);
	if (err < 0)
		die(EXIT_FAIL, "%s: %s", s->pid.path ? s->pid.path : b->state_dir,
		    strerror(-err));
}

/* The broker's own places: staging and parking (see exec.c), emptied of
 * what an earlier broker left (statedir.c). */
static int make_dirs(struct broker *b)
{
	/* a plan a killed broker left half done: before the sweep, which
	 * would take its parked mounts away (recover.c); reply.c's watches */
	return statedir_places(b) ?: intent_recover(b) ?: statedir_prepare(b) ?:
	       reply_init() ?: newmount_reset(b);
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
		exit(read(p[0], buf, 2) == 2 ? 0 : EXIT_FAIL);
	}
	close(p[0]);
	setsid();
	*ready = p[1];
	return 0;
}

/* Where messages go once running: the setting, else syslog for a daemon
 * and stderr in the foreground.  Detached, what is not a log file of its
 * own goes to /dev/null. */
static int open_log(const struct setup *s, bool detached)
{
	const char *where = *s->cfg.log ? s->cfg.log :
			    detached ? "syslog" : "stderr";
	int null;
	if (detached && (null = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0) {
		dup2(null, 0);
		if (where[0] != '/') {
			dup2(null, 1);
			dup2(null, 2);
		}
		close(null);
	}
	return log_open(where, s->cfg.debug);
}

/* A log file must be writable before the broker detaches, while its
 * starter still reads the messages. */
static void check_log(const struct setup *s)
{
	int fd;
	if (s->cfg.log[0] != '/')
		return;
	fd = open(s->cfg.log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	if (fd < 0)
		die(EXIT_FAIL, "log %s: %s", s->cfg.log, strerror(errno));
	close(fd);
}

/* The mount limit: the setting, else fs.mount-max.  A limit below the
 * mounts already there would leave the graph past it from the start. */
static int set_limit(struct broker *b, unsigned max)
{
	unsigned limit = max ? max :
			 (unsigned)sysctl_value("/proc/sys/fs/mount-max");
	if (limit && limit < b->ns->count)
		return -ERANGE;
	b->g.max_mounts = limit ? limit : b->g.max_mounts;
	return 0;
}

/* SIGHUP: the configuration file again, under the same command line.  The
 * log and its level, and the mount limit, change at once; the socket and
 * the state directory only at the next start. */
static void reload(struct broker *b)
{
	struct setup *s = &the_setup;
	struct config old = s->cfg;
	char why[PATH_MAX + 200];
	int err = load(s, why, sizeof why);
	if (err < 0) {
		log_msg(LOG_ERR, "SIGHUP: %s: the settings stay as they were",
			why);
		return;
	}
	if ((err = open_log(s, !s->foreground)) < 0 ||
	    (err = log_reopen()) < 0)
		log_msg(LOG_ERR, "SIGHUP: log %s: %s", s->cfg.log,
			strerror(-err));
	if (strcmp(old.socket, s->cfg.socket) ||
	    strcmp(old.state_dir, s->cfg.state_dir))
		log_msg(LOG_WARNING, "SIGHUP: a new socket or state directory "
			"takes effect at the next start; still %s, %s",
			old.socket, old.state_dir);
	strcpy(s->cfg.socket, old.socket);
	strcpy(s->cfg.state_dir, old.state_dir);
	if (set_limit(b, s->cfg.max_mounts) < 0) {
		log_msg(LOG_ERR, "SIGHUP: max-mounts %u is below the %u mounts "
			"there are: the limit stays %u", s->cfg.max_mounts,
			b->ns->count, b->g.max_mounts);
		s->cfg.max_mounts = old.max_mounts;
	}
	log_msg(LOG_INFO, "SIGHUP: %s read again, log reopened", s->file);
}

/* The graph: the kernel's table, the limit, the saved propagation. */
static void start_graph(struct broker *b, const struct setup *s)
{
	const char *table = s->table ? s->table : "/proc/self/mountinfo";
	int err;
	graph_init(&b->g, 0);
	b->g.kernel_marks = true;      /* MNT_EXPIRE's: expire.c */
	b->ns = ns_new(&b->g);
	expiry_load(b);
	err = import_table(b, table);
	if (err == -ENOENT && !s->table)  /* before 2.6.26 */
		err = import_table(b, "/proc/mounts");
	expiry_loaded(b);
	recover_forget();              /* what recovery kept is imported */
	if (err < 0) {
		if (err != -EEXIST)    /* import.c said why */
			die(EXIT_FAIL, "cannot import the mount table: %s",
			    strerror(-err));
		exit(EXIT_FAIL);
	}
	if (set_limit(b, s->cfg.max_mounts) < 0)
		die(EXIT_USAGE, "max-mounts %u: the mount table already holds "
		    "%u mounts", s->cfg.max_mounts, b->ns->count);
	if ((err = state_load(b)) < 0)
		fprintf(stderr, "sharebrokerd: %s/state: %s\n", b->state_dir,
			strerror(-err));
	/* the saved state as the graph has it now, whole: later saves
	 * journal what each request changes from it (without one, the
	 * first save is whole) */
	if (err > 0)
		state_full(b);
}

int main(int argc, char **argv)
{
	static struct broker b;
	struct setup *s = &the_setup;
	char why[PATH_MAX + 200];
	int ready = -1, err;

	parse(s, argc, argv);
	/* root before the file: the file may lie where only root reads
	 * (/etc/libshare, or a prefix inside a mode-700 tree), and a user
	 * who may not run the broker is told that, not the file's EACCES.
	 * --print-config only reads, as anyone may. */
	if (!s->print && geteuid() != 0)
		die(EXIT_FAIL, "must run as root");
	if (load(s, why, sizeof why) < 0)
		die(EXIT_USAGE, "%s", why);
	if (s->print) {
		config_print(&s->cfg, stdout);
		return 0;
	}
	log_setup(false, s->cfg.debug);
	b.state_dir = s->cfg.state_dir;
	lock_state(&b, s);
	mntid_known(handle_fd_of_kid, &b);
	state_part_set(&nsstate_part);
	holder_adopt(&b);              /* before recovery, which uses it */
	if ((err = make_dirs(&b)) < 0)
		die(EXIT_FAIL, "%s: %s", b.state_dir, strerror(-err));
	check_log(s);
	fusetab_clean(b.state_dir);    /* a FUSE mount a dead broker left */
	start_graph(&b, s);
	mntns_init();
	if ((b.listen_fd = server_listen(s->cfg.socket)) < 0)
		die(EXIT_FAIL, "%s: %s", s->cfg.socket,
		    b.listen_fd == -EADDRINUSE ?
		    "a broker is already listening" : strerror(-b.listen_fd));
	if (!s->foreground && (err = detach(&ready)) < 0)
		die(EXIT_FAIL, "cannot detach: %s", strerror(-err));
	if ((err = pidfile_write(&s->pid, getpid())) < 0)
		die(EXIT_FAIL, "%s: %s", s->pid.path, strerror(-err));
	/* after detach(): the holder is the child of the broker that stays */
	if ((err = holder_spawn(&b, s->pid.fd)) < 0)
		die(EXIT_FAIL, "cannot start the holder: %s", strerror(-err));
	signals_init(&b, reload);
	if (chdir("/") < 0)
		die(EXIT_FAIL, "/: %s", strerror(errno));
	if ((err = open_log(s, ready >= 0)) < 0)
		die(EXIT_FAIL, "log %s: %s", s->cfg.log, strerror(-err));
	/* after detach() (a fork keeps no thread), and before the watch
	 * opens (fusetab's own mount is no drift) */
	if (!s->no_fuse)
		fusetab_start(&b);
	else
		log_msg(LOG_INFO, "--no-fuse: open mount tables are snapshots");
	b.watch = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	log_msg(LOG_INFO, "started: socket %s, state directory %s, %u mounts "
		"imported, limit %u", s->cfg.socket, b.state_dir, b.ns->count,
		b.g.max_mounts);
	if (ready >= 0 && (write(ready, "ok", 2) != 2 || close(ready) < 0))
		return EXIT_FAIL;
	server_loop(&b, s->cfg.threads, admin_tick);
	close(b.listen_fd);
	state_close(&b);
	log_msg(LOG_INFO, "stopped: every mount stays where it is");
	pidfile_remove(&s->pid);
	return 0;
}
