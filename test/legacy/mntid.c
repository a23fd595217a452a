/*
 * mntid PATH... [-- COMMAND [ARGS...]] - the broker's two ways to a mount
 * id side by side (daemon/broker/base/fd.c, mntid.c).  Opens each PATH
 * (O_PATH), runs COMMAND when given (it may cover them), then prints a
 * line per PATH: "PATH FDINFO MOUNTINFO WITHIN BEFORE", the id of fdinfo's
 * mnt_id line, the one mountinfo_mnt_id() finds without it from a table
 * read per PATH (-errno when none), the one it finds from one table read
 * for all the PATHs, sorted (the import's way, mntid_within()), and from
 * one read before COMMAND (which it finds changed: a table read per PATH).
 * Exit status 0, 2 on usage, 1 when a PATH cannot be opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "base/base.h"
#include "base/mtparse.h"

int main(int argc, char **argv)
{
	int n = 1, fds[256];
	char path[64];

	while (n < argc && strcmp(argv[n], "--") != 0)
		n++;
	if (n == 1 || n > 257 || n == argc - 1) {
		fprintf(stderr, "usage: mntid PATH... [-- COMMAND [ARGS...]]\n");
		return 2;
	}
	for (int i = 1; i < n; i++)
		if ((fds[i - 1] = open(argv[i], O_PATH | O_CLOEXEC)) < 0) {
			perror(argv[i]);
			return 1;
		}
	struct table t, before;
	if (table_read(&before) < 0) {
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
	if (table_read(&t) < 0) {
		perror("/proc/self/mountinfo");
		return 1;
	}
	for (int i = 1; i < n; i++) {
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
