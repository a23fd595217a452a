/*
 * umount2 [-l] [-e] [-f] [--nofollow] PATH - the system call as such, for
 * the kernel-differential scenarios: util-linux's umount makes PATH
 * absolute first (even with -c), so "." would never reach the kernel's
 * LOOKUP_MOUNTPOINT rule (issue 13); and it looks PATH up (realpath,
 * stat) before it calls, which would clear the MNT_EXPIRE mark (-e) that
 * the scenarios test (issue 29).  -f is MNT_FORCE.  Exit 0, or 32 as
 * umount(8) does; spy.so records the call's errno.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

#ifndef UMOUNT_NOFOLLOW
#define UMOUNT_NOFOLLOW 8
#endif

int main(int argc, char **argv)
{
	int flags = 0, i;

	for (i = 1; i < argc - 1; i++) {
		if (strcmp(argv[i], "-l") == 0)
			flags |= MNT_DETACH;
		else if (strcmp(argv[i], "-e") == 0)
			flags |= MNT_EXPIRE;
		else if (strcmp(argv[i], "-f") == 0)
			flags |= MNT_FORCE;
		else if (strcmp(argv[i], "--nofollow") == 0)
			flags |= UMOUNT_NOFOLLOW;
		else
			argc = 0;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: umount2 [-l] [-e] [-f] [--nofollow] "
			"PATH\n");
		return 2;
	}
	return umount2(argv[argc - 1], flags) == 0 ? 0 : 32;
}
