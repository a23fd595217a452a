/* mntid.c: the kernel's id of a descriptor's mount where neither a file
 * handle (no CONFIG_FHANDLE, or a filesystem without handles) nor fdinfo
 * (before Linux 3.15) says it: from /proc/self/mountinfo.
 *
 * The descriptor's path (/proc/self/fd, d_path()) is the chain of
 * mountpoints up from its own mount, so that mount is one on the
 * descriptor's device whose mountpoint starts the path.  A walk of the
 * path reaches the top of what is mounted there (walk()); a descriptor
 * opened by a path, as nearly all are, is on that mount.  Whether it is:
 * for a directory, rename(2) of "." to "." answers EXDEV between two
 * mounts and EBUSY within one, and changes nothing (the kernel compares
 * the mounts first, fs/namei.c); for a file, device and inode.  A
 * descriptor beneath a stack (a covered mount's handle) is on one of the
 * others: the only one on its device at the longest mountpoint that
 * starts the path.  Where two are, the table cannot tell: -ENOENT.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker.h"
#include "mtparse.h"

/* A mount on dir of parent; with no parent, the table's root (the mount
 * whose parent the table does not have, or is itself). */
static const struct entry *child_on(const struct table *t,
				    const struct entry *parent,
				    const char *dir)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct entry *e = &t->v[i];
		bool child = parent ? e->parent == parent->id :
			     e->parent == e->id || !table_find(t, e->parent);
		if (e->id && e != parent && child && strcmp(e->mp, dir) == 0)
			return e;
	}
	return NULL;
}

/* The top of the mounts stacked on dir of parent, parent when none is. */
static const struct entry *top_at(const struct table *t,
				  const struct entry *parent, const char *dir)
{
	for (const struct entry *up; (up = child_on(t, parent, dir)); )
		parent = up;
	return parent;
}

/* The mount a walk of path reaches now: at each directory on the way,
 * the top of what is mounted on it. */
static const struct entry *walk(const struct table *t, const char *path)
{
	char dir[PATH_MAX];
	const struct entry *cur = top_at(t, NULL, "/");
	size_t n = strlen(path);
	if (n >= sizeof dir)
		return NULL;
	for (size_t i = 1; cur && i <= n; i++)
		if (path[i] == '/' || path[i] == '\0') {
			memcpy(dir, path, i);
			dir[i] = '\0';
			cur = top_at(t, cur, dir);
		}
	return cur;
}

/* Whether fd is on the mount a walk of path, its own, reaches.  System
 * calls only: the holder asks it too (holdproc.c). */
bool fd_reached(int fd, const char *path)
{
	struct stat st, top_st;
	if (fd_stat(fd, &st) < 0)
		return false;
	int top = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	bool same = top >= 0 && fd_stat(top, &top_st) == 0 &&
		    top_st.st_dev == st.st_dev && top_st.st_ino == st.st_ino;
	if (same && S_ISDIR(st.st_mode))
		same = renameat(fd, ".", top, ".") < 0 && errno == EBUSY;
	if (top >= 0)
		close(top);
	return same;
}

/* A descriptor beneath v, the mount its path reaches: the one other
 * mount on dev at the longest mountpoint that starts path. */
static int beneath(const struct table *t, const struct entry *v,
		   const char *path, dev_t dev)
{
	const struct entry *best = NULL;
	bool twice = false;
	for (size_t i = 0; i < t->n; i++) {
		const struct entry *e = &t->v[i];
		if (!e->id || e == v || entry_dev(e) != dev ||
		    !path_under(path, e->mp))
			continue;
		size_t len = strlen(e->mp);
		if (best && len == strlen(best->mp)) {
			twice = true;
		} else if (!best || len > strlen(best->mp)) {
			best = e;
			twice = false;
		}
	}
	return best && !twice ? best->id : -ENOENT;
}

int mountinfo_mnt_id(int fd)
{
	struct table t;
	struct stat st;
	char *path = fd_path(fd);
	int id = !path || path[0] != '/' || strstr(path, " (deleted)") ||
		 fd_stat(fd, &st) < 0 ? -ENOENT : table_read(&t);
	if (id == 0) {
		const struct entry *v = walk(&t, path);
		id = v && entry_dev(v) == st.st_dev && fd_reached(fd, path) ?
		     v->id : beneath(&t, v, path, st.st_dev);
		table_free(&t);
	}
	free(path);
	return id;
}
