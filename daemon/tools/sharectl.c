/* sharectl: the administrator's command.
 *
 *   sharectl [--socket ADDR] status | stop [--final] | jails | ns
 *   sharectl [--socket ADDR] tree [--root DIR | --ns PID]
 *   sharectl [--socket ADDR] graph [--output FILE.svg|FILE.png|FILE.dot]
 *   sharectl [--socket ADDR] apply [--dry-run] [--jail DIR] [FILE|DIR]...
 *   sharectl check [--jail DIR] [FILE|DIR]...   (jailtab_cmd.c)
 *
 * tree: the mount tree of the broker's graph as findmnt -o TARGET,SOURCE,
 * FSROOT,PROPAGATION shows it, to the caller, to a process whose root is
 * DIR, or to process PID in its mount namespace.  ns: the mount namespaces
 * (unshare -m through the shim), with their roots and processes.  graph: the propagation graph in Graphviz DOT, on stdout or in FILE;
 * an .svg or .png is drawn by Graphviz's dot.
 *
 * Exit status: 0 on success; 1 when the broker refuses or does not answer
 * (status: no broker), or dot is missing or fails; 2 for a usage error.
 * stop --final: no broker will follow, so the broker's holder (the
 * process keeping covered mounts for the next one) ends with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "libshare_proto.h"
#include "libshare_wire.h"
#include "jailtab.h"

static void usage(FILE *out, int code)
{
	fprintf(out, "usage: sharectl [--socket ADDR] status|jails|ns\n"
		"       sharectl [--socket ADDR] stop [--final]\n"
		"       sharectl [--socket ADDR] tree [--root DIR|--ns PID]\n"
		"       sharectl [--socket ADDR] graph "
		"[--output FILE.svg|FILE.png|FILE.dot]\n"
		"       sharectl [--socket ADDR] apply [--dry-run] [--jail DIR] "
		"[FILE|DIR]...\n"
		"       sharectl check [--jail DIR] [FILE|DIR]...\n"
		"Asks sharebrokerd, libshare's broker (sharectl(8)).\n\n"
		"  -s, --socket ADDR   the broker's socket: @NAME or /PATH\n"
		"                      (default $%s, else %s)\n"
		"  -r, --root DIR      tree: as a process chrooted into DIR sees it\n"
		"  -n, --ns PID        tree: as process PID sees it, in its mount\n"
		"                      namespace\n"
		"  -o, --output FILE   graph: into FILE, as .dot, .svg or .png\n"
		"  -f, --final         stop: no broker follows; its holder of\n"
		"                      covered mounts ends too\n"
		"  -h, --help          this help\n"
		"  -V, --version       the version\n\n"
		"Exit status: 0 success, 1 the broker refused or is absent,\n"
		"2 usage error.  Report bugs to <%s>.\n",
		LS_SOCKET_ENV, LS_SOCKET_DEFAULT, PACKAGE_BUGREPORT);
	exit(code);
}

/* A usage error that is not a wrong word: one line saying what. */
static void refuse(const char *what, const char *value, const char *why)
{
	fprintf(stderr, "sharectl: %s '%s': %s\n", what, value, why);
	exit(2);
}

/* One round trip, field 1 being arg and field 0 pid when not NULL
 * (broker_call(), the one
 * client of the broker's in the tools); the reply's text goes to stdout,
 * its descriptor to *pass (-1 when none).  Returns the reply's errno, or
 * a negative errno when no root broker answered or its answer was not
 * one (-EIO). */
static int ask(const char *addr, uint16_t op, const char *pid,
	       const char *arg, unsigned long flags, int *pass)
{
	static char text[LS_TEXT_MAX];
	const char *const f[LS_NFIELDS] = { pid, arg, NULL, NULL };
	size_t len = sizeof text;
	int err = broker_call(addr, op, f, flags, text, &len, pass);
	if (err >= 0)
		fwrite(text, 1, len, stdout);
	return err;
}

/* Copies the file from to the descriptor to; 0 or -errno. */
static int copy(int from, int to)
{
	char buf[65536];
	ssize_t n;
	while ((n = read(from, buf, sizeof buf)) > 0)
		for (ssize_t off = 0, w; off < n; off += w)
			if ((w = write(to, buf + off, (size_t)(n - off))) < 0)
				return -errno;
	return n < 0 ? -errno : 0;
}

/* The graph drawn into file by Graphviz's dot as format (svg, png). */
static int draw(int dot_src, const char *file, const char *format)
{
	char type[16];
	char *argv[] = { "dot", type, "-o", (char *)file, NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st, err;
	snprintf(type, sizeof type, "-T%s", format);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, dot_src, 0);
	err = posix_spawnp(&pid, "dot", &fa, NULL, argv, NULL);
	posix_spawn_file_actions_destroy(&fa);
	if (err == ENOENT) {
		fprintf(stderr, "sharectl: graph: %s needs Graphviz's dot, "
			"which is not installed\n", file);
		return 1;
	}
	if (err || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
	    WEXITSTATUS(st)) {
		fprintf(stderr, "sharectl: graph: dot could not draw %s\n", file);
		return 1;
	}
	return 0;
}

/* The format --output asks for ("svg", "png", "dot"), NULL if none. */
static const char *format_of(const char *file)
{
	static const char *const known[] = { "svg", "png", "dot" };
	const char *dot = strrchr(file, '.');
	for (size_t i = 0; dot && i < sizeof known / sizeof *known; i++)
		if (strcmp(dot + 1, known[i]) == 0)
			return known[i];
	return NULL;
}

/* The text a tree or graph reply carried in fd, where it belongs. */
static int deliver(int fd, const char *output)
{
	int err, to = 1;
	fflush(stdout);
	if (output && strcmp(format_of(output), "dot") != 0)
		return draw(fd, output, format_of(output));
	if (output && (to = open(output, O_WRONLY | O_CREAT | O_TRUNC |
				 O_CLOEXEC, 0666)) < 0) {
		fprintf(stderr, "sharectl: %s: %s\n", output, strerror(errno));
		return 1;
	}
	err = copy(fd, to);
	if (output && close(to) < 0 && !err)
		err = -errno;
	if (err)
		fprintf(stderr, "sharectl: %s: %s\n", output ? output : "stdout",
			strerror(-err));
	return err ? 1 : 0;
}

/* One command; its exit status. */
static int run(const char *addr, const char *name, uint16_t op,
	       const char *pid, const char *root, const char *output,
	       unsigned long flags)
{
	int pass, err = ask(addr, op, pid, root, flags, &pass);
	if (err < 0)
		fprintf(stderr, "sharectl: no broker at %s: %s\n", addr,
			strerror(-err));
	else if (err > 0 && (root || pid))
		fprintf(stderr, "sharectl: %s: %s%s: %s\n", name,
			root ? "" : "process ", root ? root : pid,
			strerror(err));
	else if (err > 0)
		fprintf(stderr, "sharectl: %s: %s\n", name, strerror(err));
	else if (pass >= 0)
		err = deliver(pass, output);
	else if (op == LS_OP_TREE || op == LS_OP_GRAPH) {
		fprintf(stderr, "sharectl: %s: the broker sent no text\n", name);
		err = 1;
	}
	if (pass >= 0)
		close(pass);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "root", required_argument, NULL, 'r' },
		{ "ns", required_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "final", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	static const struct { const char *name; uint16_t op; } cmds[] = {
		{ "status", LS_OP_STATUS }, { "stop", LS_OP_STOP },
		{ "jails", LS_OP_JAILS }, { "tree", LS_OP_TREE },
		{ "graph", LS_OP_GRAPH }, { "ns", LS_OP_NAMESPACES },
	};
	const char *addr = getenv(LS_SOCKET_ENV), *root = NULL, *output = NULL,
		   *pid = NULL;
	unsigned long flags = 0;
	struct sockaddr_un sa;
	socklen_t len;
	int c = jailtab_command(argc, argv);   /* apply, check: jailtab_cmd.c */
	if (c >= 0)
		return c;
	while ((c = getopt_long(argc, argv, "s:r:n:o:fhV", opts, NULL)) != -1)
		if (c == 's' && ls_address(optarg, &sa, &len) < 0)
			refuse("--socket", optarg, "not @NAME (abstract) nor an "
			       "absolute /PATH of 2 to 107 bytes");
		else if (c == 's')
			addr = optarg;
		else if (c == 'r')
			root = optarg;
		else if (c == 'n')
			pid = optarg;
		else if (c == 'o' && !format_of(optarg))
			refuse("--output", optarg, "unsupported format: the "
			       "name must end in .dot, .svg or .png");
		else if (c == 'o')
			output = optarg;
		else if (c == 'f')
			flags = LS_STOP_FINAL;
		else if (c == 'V') {
			printf("sharectl (%s) %s\n", PACKAGE_NAME,
			       PACKAGE_VERSION);
			return 0;
		} else
			usage(c == 'h' ? stdout : stderr, c == 'h' ? 0 : 2);
	addr = ls_socket_name(addr);
	if (optind + 1 != argc)
		usage(stderr, 2);
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		uint16_t op = cmds[i].op;
		if (strcmp(argv[optind], cmds[i].name) != 0)
			continue;
		if ((root && (op != LS_OP_TREE || !*root ||
			      strlen(root) > LS_FIELD_MAX)) ||
		    (pid && (op != LS_OP_TREE || root || !*pid ||
			     strlen(pid) > 10 ||
			     strspn(pid, "0123456789") != strlen(pid))) ||
		    (output && (op != LS_OP_GRAPH || !format_of(output))) ||
		    (flags && op != LS_OP_STOP))
			usage(stderr, 2);
		return run(addr, cmds[i].name, op, pid, root, output, flags);
	}
	usage(stderr, 2);
}
