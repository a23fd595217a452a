/* sharedry: the engine's dry run.  Reads a script of util-linux commands,
 * applies them to the engine alone (no syscalls) and prints each command's
 * result and the mount table as seen from chosen roots.  The same script
 * runs unchanged under bash against the kernel (test/diff/).
 *
 *   sharedry [--base DIR] [--view DIR]... [--max-mounts N] [--trace]
 *            [--tree] [--no-check] SCRIPT|-
 *
 * --trace echoes the script and each plan's steps; --tree prints the mount
 * tree with its propagation after every change; --no-check skips the
 * invariant and plan checks that are on by default.
 *
 * The model: a root filesystem "/" holding DIR (default /tmp/w), with a
 * private tmpfs named BASE mounted on it; $B in the script means DIR.
 * Commands: mkdir -p, touch, mount (-t, -o, --bind, --rbind, --move,
 * --make-*, -o remount, -c: see dry_mount.c), umount [-l], umount2 [-l]
 * [-e] [-f] [--nofollow] (the system call: the path as given; -e
 * MNT_EXPIRE, -f MNT_FORCE), pivot_root, hold, hold_fd and release (a
 * process keeps a mount busy, by its cwd or an open file), use
 * stat|open|chdir PATH (a process uses PATH's mount once: its MNT_EXPIRE
 * mark goes, as any lookup's by the commands does), cd DIR (the cwd of every
 * later command, kept by a process: covered by later mounts, busy), each
 * optionally prefixed by "chroot JAIL"; "unshare NAME" copies the
 * namespace and "within NAME"
 * runs a command in the copy.  --view NAME:/ shows a copy's whole table.
 * Each mount/umount command prints "L<line> OK" or "L<line> <ERRNO NAME>".
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dry.h"

static void usage(FILE *out, int code)
{
	fprintf(out, "usage: sharedry [OPTION]... SCRIPT|-\n"
		"Runs a script of util-linux mount commands against libshare's "
		"engine alone\n(sharedry(1)).\n\n"
		"  -b, --base DIR      the sandbox $B stands for (default /tmp/w)\n"
		"  -v, --view DIR      also print the table as a process whose "
		"root is DIR\n"
		"                      sees it (NAME:/ for a copied namespace); "
		"repeatable\n"
		"  -m, --max-mounts N  the mount limit (default 100000)\n"
		"  -t, --trace         echo each command and its plan's steps\n"
		"  -T, --tree          print the tree with its propagation after "
		"each change\n"
		"  -n, --no-check      skip the invariant and plan checks\n"
		"  -h, --help          this help\n"
		"  -V, --version       the version\n\n"
		"Exit status: 0 the script ran, 1 it cannot be read, 2 usage "
		"error,\n3 a command or check went wrong.  Report bugs to "
		"<%s>.\n", PACKAGE_BUGREPORT);
	exit(code);
}

/* --max-mounts: a whole number from 1, nothing else. */
static unsigned max_mounts(const char *s)
{
	char *end;
	unsigned long v;
	errno = 0;
	v = *s >= '0' && *s <= '9' ? strtoul(s, &end, 10) : 0;
	if (!v || errno || *end || v > UINT_MAX) {
		fprintf(stderr, "sharedry: --max-mounts '%s': not a whole "
			"number from 1 to %u\n", s, UINT_MAX);
		exit(2);
	}
	return (unsigned)v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "base", required_argument, NULL, 'b' },
		{ "view", required_argument, NULL, 'v' },
		{ "max-mounts", required_argument, NULL, 'm' },
		{ "trace", no_argument, NULL, 't' },
		{ "tree", no_argument, NULL, 'T' },
		{ "no-check", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	struct dry d = { .base = "/tmp/w", .check = true };
	const char *views[64];
	size_t nviews = 0;
	unsigned max = 0;
	int c;

	while ((c = getopt_long(argc, argv, "b:v:m:tTnhV", opts, NULL)) != -1) {
		switch (c) {
		case 'b': d.base = optarg; break;
		case 'v':
			if (nviews == sizeof views / sizeof *views)
				usage(stderr, 2);
			views[nviews++] = optarg;
			break;
		case 'm': max = max_mounts(optarg); break;
		case 't': d.trace = true; break;
		case 'T': d.tree = true; break;
		case 'n': d.check = false; break;
		case 'h': usage(stdout, 0); break;
		case 'V': printf("sharedry (%s) %s\n", PACKAGE_NAME,
				 PACKAGE_VERSION);
			  return 0;
		default: usage(stderr, 2);
		}
	}
	if (optind != argc - 1 || d.base[0] != '/')
		usage(stderr, 2);
	FILE *in = strcmp(argv[optind], "-") ? fopen(argv[optind], "r") : stdin;
	if (!in) {
		fprintf(stderr, "sharedry: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	if (dry_init(&d, max) < 0)
		return 1;
	int err = dry_run(&d, in);
	for (size_t i = 0; !err && i < nviews; i++)
		err = dry_view(&d, views[i]);
	dry_free(&d);
	return err ? 3 : 0;
}
