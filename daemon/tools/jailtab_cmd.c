/* jailtab_cmd.c: sharectl's commands for jailtab files (man/jailtab.5).
 *
 *   sharectl [--socket ADDR] apply [--dry-run] [--jail DIR] [FILE|DIR]...
 *   sharectl check [--jail DIR] [FILE|DIR]...
 *
 * A DIR stands for its *.tab files in C-locale order.  Without arguments:
 * SYSCONFDIR/libshare/jailtab and SYSCONFDIR/libshare/jailtab.d, either
 * of which may be missing, which is what a service runs at boot.
 *
 * --jail DIR: every target is a path inside the jail DIR, and every line
 * belongs to it (schroot's setup hook: a profile's lines for a session).
 *
 * Exit status: 0 done (check: no error); 1 an error in a file (nothing is
 * applied then), a line that failed, or no broker; 2 a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "jailtab.h"
#include "libshare_proto.h"
#include "libshare_wire.h"

#ifndef LS_SYSCONFDIR
#define LS_SYSCONFDIR "/etc"
#endif

static const char *const defaults[] = {
	LS_SYSCONFDIR "/libshare/jailtab", LS_SYSCONFDIR "/libshare/jailtab.d",
};

static int usage(FILE *out, int code)
{
	fprintf(out, "usage: sharectl [--socket ADDR] apply [--dry-run] "
		"[--jail DIR] [FILE|DIR]...\n"
		"       sharectl check [--jail DIR] [FILE|DIR]...\n");
	return code;
}

/* One argument, a file or a directory of *.tab; quiet: a missing one is
 * no error (the defaults). */
static int read_one(struct jt_tab *t, const char *path, bool quiet)
{
	struct stat st;
	int err;
	if (stat(path, &st) < 0)
		err = -errno;
	else if (S_ISDIR(st.st_mode))
		err = jt_read_dir(t, path, stderr);
	else
		err = jt_read(t, path, stderr);
	if (err == -ENOENT && quiet)
		return 0;
	if (err < 0)
		fprintf(stderr, "sharectl: %s: %s\n", path, strerror(-err));
	return err;
}

/* Every file named (or the defaults) into t; 1 when any is wrong. */
static int read_all(struct jt_tab *t, int argc, char **argv)
{
	int bad = 0;
	if (argc == 0)
		for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++)
			bad |= read_one(t, defaults[i], true) < 0;
	for (int i = 0; i < argc; i++)
		bad |= read_one(t, argv[i], false) < 0;
	jt_finish(t, stderr);
	return bad || t->errors ? 1 : 0;
}

static int apply(const char *addr, bool dry, const struct jt_tab *t)
{
	struct backend b;
	unsigned changes = 0;
	char *probe = NULL;
	int err = dry ? dry_backend(&b, addr) : broker_backend(&b, addr);
	if (!err && !dry && (err = b.table(b.ctx, &probe)) < 0)
		fprintf(stderr, "sharectl: no broker at %s: %s\n", addr,
			strerror(-err));
	else if (err < 0)
		fprintf(stderr, "sharectl: apply: %s\n", strerror(-err));
	free(probe);
	if (err < 0)
		return 1;
	err = jt_apply(t, &b, stdout, &changes);
	printf("sharectl: apply%s: %u change%s\n", dry ? " --dry-run" : "",
	       changes, changes == 1 ? "" : "s");
	if (dry)
		dry_backend_free(&b);
	return err < 0 ? 1 : 0;
}

/* Where the command word is: past the options before it (--socket ADDR
 * is the only one that takes a word); 0 when there is none. */
static int command_at(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--socket") == 0)
			i++;
		else if (strncmp(argv[i], "--socket=", 9) == 0)
			continue;
		else
			return argv[i][0] == '-' ? 0 : i;
	}
	return 0;
}

int jailtab_command(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "jail", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *addr = getenv(LS_SOCKET_ENV);
	struct jt_tab t = { 0 };
	bool dry = false;
	int c, at = command_at(argc, argv), rc;
	if (!at || (strcmp(argv[at], "apply") && strcmp(argv[at], "check")))
		return -1;
	bool check = argv[at][0] == 'c';
	for (int i = 1; i < at; i++)   /* the options before the command */
		if (strcmp(argv[i], "--socket") == 0)
			addr = argv[++i];
		else if (strncmp(argv[i], "--socket=", 9) == 0)
			addr = argv[i] + 9;
	optind = 1;
	while ((c = getopt_long(argc - at, argv + at, "", opts, NULL)) != -1)
		if (c == 's')
			addr = optarg;
		else if (c == 'n' && !check)
			dry = true;
		else if (c == 'j' && optarg[0] == '/')
			t.root = optarg;
		else if (c == 'h')
			return usage(stdout, 0);
		else
			return usage(stderr, 2);
	addr = ls_socket_name(addr);
	rc = read_all(&t, argc - at - optind, argv + at + optind);
	if (rc)
		fprintf(stderr, "sharectl: %s: %u error%s%s\n", argv[at],
			t.errors, t.errors == 1 ? "" : "s",
			check ? "" : "; nothing applied");
	else if (check)
		printf("sharectl: check: %zu entr%s, no errors\n", t.n,
		       t.n == 1 ? "y" : "ies");
	else
		rc = apply(addr, dry, &t);
	jt_free(&t);
	return rc;
}
