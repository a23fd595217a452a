/*
 * mntid PATH... [-- COMMAND [ARGS...]] - the broker's two ways to a mount
 * id side by side (daemon/broker/base/fd.c, mntid.c).  Opens each PATH
 * (O_PATH), runs COMMAND when given (it may cover them), then prints a
 * line per PATH: "PATH FDINFO MOUNTINFO", the id of fdinfo's mnt_id line
 * and the one mountinfo_mnt_id() finds without it (-errno when none).
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
	for (int i = 1; i < n; i++) {
		snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fds[i - 1]);
		printf("%s %d %d\n", argv[i], fdinfo_mnt_id(path),
		       mountinfo_mnt_id(fds[i - 1]));
	}
	return 0;
}
