/* busy.c: which mounts are in use, as the kernel's umount would judge it
 * (semantics.md 5.3), without touching them: the broker's handles pin
 * every mount, so the kernel's own refcount test would call them all busy.
 * A mount is busy when some process other than the broker has its cwd,
 * root, executable, an open or a mapped file on it, or a thread its own
 * cwd or root there.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "broker.h"
#include "holder.h"
#include "vec.h"

static int cmp_int(const void *a, const void *b)
{
	return (*(const int *)a > *(const int *)b) -
	       (*(const int *)a < *(const int *)b);
}

static void note(struct request *r, size_t *cap, int kid)
{
	if (kid < 0)
		return;
	if (VEC_PUSH(r->busy_kids, r->nbusy, *cap, kid))
		r->busy_all = true;    /* unknown is busy: fail safe */
}

/* The mounts of the files a directory of magic links points to: a
 * process's fd/ (through fdinfo, which says it without opening), its
 * map_files/ (mapped files, e.g. shared libraries), its task/ (threads with
 * a cwd or root of their own). */
static void note_links(struct request *r, size_t *cap, const char *dir,
		       const char *const *names, size_t n)
{
	char path[600];
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d)); ) {
		if (e->d_name[0] == '.')
			continue;
		for (size_t i = 0; i < n; i++) {
			snprintf(path, sizeof path, "%s/%s%s%s", dir, e->d_name,
				 names[i][0] ? "/" : "", names[i]);
			int fd = open(path, O_PATH | O_CLOEXEC);
			if (fd >= 0) {
				note(r, cap, fd_mnt_id(fd));
				close(fd);
			}
		}
	}
	if (d)
		closedir(d);
}

/* The mounts one process uses: cwd, root, executable, open and mapped
 * files, and its threads' cwds and roots. */
static void scan_pid(struct request *r, size_t *cap, const char *pid)
{
	static const char *const own[] = { "cwd", "root", "exe" };
	static const char *const self[] = { "" };
	char path[600];
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "/proc/%s/%s", pid, own[i]);
		int fd = open(path, O_PATH | O_CLOEXEC);
		if (fd >= 0) {
			note(r, cap, fd_mnt_id(fd));
			close(fd);
		}
	}
	snprintf(path, sizeof path, "/proc/%s/task", pid);
	note_links(r, cap, path, own, 2);
	snprintf(path, sizeof path, "/proc/%s/map_files", pid);
	note_links(r, cap, path, self, 1);
	snprintf(path, sizeof path, "/proc/%s/fdinfo", pid);
	DIR *d = opendir(path);
	for (struct dirent *e; d && (e = readdir(d)); ) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/%s/fdinfo/%s", pid, e->d_name);
		note(r, cap, fdinfo_mnt_id(path));
	}
	if (d)
		closedir(d);
}

/* Which mounts some process other than the broker uses, once a request:
 * the kernel's refcount test (semantics.md 5.3) without touching them. */
static void scan_busy(struct request *r)
{
	char self[32], hold[32];   /* the holder shares our descriptors */
	size_t cap = 0;
	snprintf(self, sizeof self, "%d", (int)getpid());
	snprintf(hold, sizeof hold, "%d", (int)holder_pid());
	r->nbusy = 0;
	DIR *d = opendir("/proc");
	for (struct dirent *e; d && (e = readdir(d)); )
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9' &&
		    strcmp(e->d_name, self) != 0 && strcmp(e->d_name, hold))
			scan_pid(r, &cap, e->d_name);
	if (d)
		closedir(d);
	qsort(r->busy_kids, r->nbusy, sizeof *r->busy_kids, cmp_int);
	r->busy_known = true;
}

bool busy(void *ctx, const struct mount *m)
{
	struct request *r = ctx;
	struct handle *h = handle_of(r->b, m);
	if (!h)
		return true;   /* out of reach: never unmounted behind a use */
	if (!r->busy_known)
		scan_busy(r);
	if (r->busy_all)
		return true;
	return bsearch(&h->kid, r->busy_kids, r->nbusy, sizeof h->kid,
		       cmp_int) != NULL;
}
