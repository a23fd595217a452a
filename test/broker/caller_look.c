/* caller_look.c: the steps of caller (caller.c) that look rather than
 * mount: what a process sees in a directory, a file, its cwd; and the
 * symlink swapper of the race tests. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "caller.h"

void swap(char *a[3])
{
	time_t end = time(NULL) + atol(a[2] ? a[2] : "1");
	long n = 0;
	while (time(NULL) < end)
		for (int i = 0; i < 1000; i++, n++)
			if (renameat2(AT_FDCWD, a[0], AT_FDCWD, a[1],
				      RENAME_EXCHANGE) < 0)
				die("renameat2");
	report(-1, "swap %ld", n);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir, sorted, joined by spaces; the errno name on failure. */
void list_dir(int worker, const char *dir)
{
	char line[4096] = "", *names[256];
	size_t n = 0, len = 0;
	struct dirent *d;
	DIR *D = opendir(dir);
	if (!D) {
		report(worker, "ls %s = %s", dir, err_name(errno));
		return;
	}
	while ((d = readdir(D)) && n < 256)
		if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0)
			names[n++] = strdup(d->d_name);
	closedir(D);
	qsort(names, n, sizeof *names, by_name);
	for (size_t i = 0; i < n; i++) {
		len += (size_t)snprintf(line + len, len < sizeof line ?
					sizeof line - len : 0, "%s%s",
					i ? " " : "", names[i]);
		free(names[i]);
	}
	report(worker, "ls %s = %s", dir, line);
}

void cat_file(int worker, const char *path)
{
	char line[1024] = "";
	FILE *f = fopen(path, "re");
	if (!f) {
		report(worker, "cat %s = %s", path, err_name(errno));
		return;
	}
	if (!fgets(line, sizeof line, f))
		line[0] = '\0';
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	report(worker, "cat %s = %s", path, line);
}

void show_cwd(int worker)
{
	char buf[4096];
	if (getcwd(buf, sizeof buf))
		report(worker, "cwd = %s", buf);
	else
		report(worker, "cwd = %s", err_name(errno));
}
