/*
 * mntid [--root] PATH... [-- COMMAND [ARGS...]] - the broker's two ways to
 * a mount id side by side (daemon/broker/base/fd.c, mntid.c).  Opens each
 * PATH (O_PATH), runs COMMAND when given (it may cover them), then prints
 * a line per PATH: "PATH FDINFO MOUNTINFO WITHIN BEFORE", the id of
 * fdinfo's mnt_id line, the one mountinfo_mnt_id() finds without it from a
 * table read per PATH (-errno when none), the one it finds from one table
 * read for all the PATHs, sorted (the import's way, mntid_within()), and
 * from one read before COMMAND (which it finds changed: a table read per
 * PATH).  With --root, whether the descriptor is on its mount's root
 * instead: "PATH STATX MOUNTINFO", statx()'s STATX_ATTR_MOUNT_ROOT (Linux
 * 5.8; -1 when it cannot say) and mountinfo_at_root(), each 1 or 0.
 * Exit status 0, 2 on usage, 1 when a PATH cannot be opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "base/base.h"
#include "base/mtparse.h"

/* statx()'s word on whether fd is its mount's root: 1, 0, -1 none. */
static int statx_root(int fd)
{
	struct statx sx;
	if (statx(fd, "", AT_EMPTY_PATH, 0, &sx) < 0 ||
	    !(sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
		return -1;
	return !!(sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

int main(int argc, char **argv)
{
	int first = 1, n, fds[256];
	char path[64];
	bool root = argc > 1 && strcmp(argv[1], "--root") == 0;

	first += root;
	for (n = first; n < argc && strcmp(argv[n], "--") != 0; n++)
		;
	if (n == first || n - first > 256 || n == argc - 1) {
		fprintf(stderr, "usage: mntid [--root] PATH... "
			"[-- COMMAND [ARGS...]]\n");
		return 2;
	}
	argv += first - 1;
	argc -= first - 1;
	n -= first - 1;
	for (int i = 1; i < n; i++)
		if ((fds[i - 1] = open(argv[i], O_PATH | O_CLOEXEC)) < 0) {
			perror(argv[i]);
			return 1;
		}
	struct table t, before;
	if (table_read_watched(&before) < 0) {
		perror("/proc/self/mountinfo");
		return 1;
	}
	if (n < argc) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			execvp(argv[n + 1], argv + n + 1);
			_exit(127);
		}
		while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (table_read_watched(&t) < 0) {
		perror("/proc/self/mountinfo");
		return 1;
	}
	for (int i = 1; i < n && root; i++)
		printf("%s %d %d\n", argv[i], statx_root(fds[i - 1]),
		       mountinfo_at_root(fds[i - 1], fd_mnt_id(fds[i - 1])));
	for (int i = 1; i < n && !root; i++) {
		snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fds[i - 1]);
		printf("%s %d %d %d %d\n", argv[i], fdinfo_mnt_id(path),
		       mountinfo_mnt_id(NULL, fds[i - 1]),
		       mountinfo_mnt_id(&t, fds[i - 1]),
		       mountinfo_mnt_id(&before, fds[i - 1]));
	}
	table_free(&t);
	table_free(&before);
	return 0;
}
