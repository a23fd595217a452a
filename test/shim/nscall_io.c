/* nscall_io.c: nscall's steps that read what a namespace shows (readlink,
 * stat, ls) and those that end the process (nscall.c lists them all). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "nscall.h"

static int by_name(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static long long now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

/* rmdir until it succeeds: how long a directory stays busy. */
static void rmdir_wait(const char *dir)
{
	long long start = now_us(), t = start;
	int r;
	while ((r = rmdir(dir)) < 0 && errno == EBUSY &&
	       (t = now_us()) - start < 5000000)
		;
	if (r < 0)
		result("rmdir-wait", r);
	else
		printf("%srmdir-wait = %lld\n", prefix, now_us() - start);
}

/* The steps that end the process, and rmdir; 1 when s is none of them. */
int end_step(char **a, int n, int *used)
{
	const char *s = a[0];
	if (!strcmp(s, "exit") || !strcmp(s, "_exit") ||
	    !strcmp(s, "_Exit") || !strcmp(s, "exit_group")) {
		NEED(1);
		fflush(stdout);
		if (!strcmp(s, "exit"))
			exit(atoi(a[1]));
		if (!strcmp(s, "_exit"))
			_exit(atoi(a[1]));
		if (!strcmp(s, "_Exit"))
			_Exit(atoi(a[1]));
		syscall(SYS_exit_group, atoi(a[1]));
	} else if (!strcmp(s, "kill")) {
		NEED(0);
		fflush(stdout);
		raise(SIGKILL);
	} else if (!strcmp(s, "rmdir")) {
		NEED(1);
		result(s, rmdir(a[1]));
	} else if (!strcmp(s, "rmdir-wait")) {
		NEED(1);
		rmdir_wait(a[1]);
	} else {
		return 1;
	}
	fflush(stdout);
	return 0;
usage:
	fprintf(stderr, "nscall: bad step %s\n", s);
	return -1;
}

void show_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		printf("%sls %s: %s\n", prefix, dir, strerrorname_np(errno));
		return;
	}
	char *v[256];
	int k = 0;
	for (struct dirent *e; (e = readdir(d)) && k < 256; )
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			v[k++] = strdup(e->d_name);
	closedir(d);
	qsort(v, (size_t)k, sizeof *v, by_name);
	printf("%sls %s =", prefix, dir);
	for (int i = 0; i < k; i++)
		printf(" %s", v[i]), free(v[i]);
	printf("\n");
	fflush(stdout);
}

/* The ns file's steps; 1 when s is none of them. */
int file_step(char **a, int n, int *used)
{
	const char *s = a[0];
	struct stat st;
	char buf[4096];
	if (!strcmp(s, "readlink")) {
		NEED(1);
		ssize_t r = readlink(a[1], buf, sizeof buf - 1);
		if (r < 0)
			result(s, r);
		else
			printf("%sreadlink = %.*s\n", prefix, (int)r, buf);
	} else if (!strcmp(s, "stat") || !strcmp(s, "lstat") ||
		   !strcmp(s, "fstat")) {
		NEED(1);
		int fd = -1, r = s[0] == 's' ? stat(a[1], &st) :
				 s[0] == 'l' ? lstat(a[1], &st) :
				 (fd = open(a[1], O_RDONLY)) < 0 ? -1 :
				 fstat(fd, &st);
		if (fd >= 0)
			close(fd);
		if (r < 0)
			result(s, r);
		else
			printf("%s%s = %llu %s\n", prefix, s,
			       (unsigned long long)st.st_ino,
			       S_ISREG(st.st_mode) ? "file" :
			       S_ISLNK(st.st_mode) ? "link" : "other");
	} else {
		return 1;
	}
	fflush(stdout);
	return 0;
usage:
	fprintf(stderr, "nscall: bad step %s\n", s);
	return -1;
}
