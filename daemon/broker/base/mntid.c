/* mntid.c: the kernel's id of a descriptor's mount: from a file handle,
 * from fdinfo, and where neither says it (no CONFIG_FHANDLE, or a
 * filesystem without handles; before Linux 3.15), from
 * /proc/self/mountinfo.
 *
 * The descriptor's path (/proc/self/fd, d_path()) is the chain of
 * mountpoints up from its own mount, so that mount is one on the
 * descriptor's device whose mountpoint starts the path.  A walk of the
 * path reaches the top of what is mounted there (table_walk()); a descriptor
 * opened by a path, as nearly all are, is on that mount.  Whether it is:
 * for a directory, rename(2) of "." to "." answers EXDEV between two
 * mounts and EBUSY within one, and changes nothing (the kernel compares
 * the mounts first, fs/namei.c); for a file, device and inode.  A
 * descriptor beneath a stack (a covered mount's handle) is on one of the
 * others on its device: the one at the longest mountpoint that starts the
 * path, unless the same test against the broker's handles says which, or
 * rules it out.  Where two remain, the table cannot tell: -ENOENT (a
 * restart's import asks holder.ids then, holder.c).
 *
 * A question reads the table again, for the table as it is; a caller
 * asking of every mount (the import, sync_table()) hands over the table
 * it has just read (mntid_within()), sorted once for the walks, and used
 * while the kernel flags no change to it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/base.h"
#include "base/mtparse.h"

/* Whether the two directories are on one mount: rename of "." to "."
 * fails with EXDEV between two mounts, EBUSY within one. */
static bool same_mount(int a, int b)
{
	return renameat(a, ".", b, ".") < 0 && errno == EBUSY;
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
		same = same_mount(fd, top);
	if (top >= 0)
		close(top);
	return same;
}

/* The handles that tell mounts apart (mntid_known()): the descriptor the
 * broker holds on mount kid, or -1.  Asked through the hold (handle.c),
 * which sits above this ground and registers itself. */
static int (*held_fd)(const void *ctx, int kid);
static const void *held_ctx;

void mntid_known(int (*held)(const void *ctx, int kid), const void *ctx)
{
	held_fd = held;
	held_ctx = ctx;
}

/* Whether fd is on e's mount: 1, 0 if not, -1 if no handle can say. */
static int on_handle(int fd, const struct entry *e)
{
	int hfd = held_fd ? held_fd(held_ctx, e->id) : -1;
	struct stat st;
	if (hfd < 0 || fd_stat(fd, &st) < 0 || !S_ISDIR(st.st_mode))
		return -1;
	return same_mount(fd, hfd);
}

/* Whether e may be the mount of a descriptor at path on dev that is not
 * on v, the mount the path reaches. */
static bool candidate(const struct entry *e, const struct entry *v,
		      const char *path, dev_t dev)
{
	return e->id && e != v && entry_dev(e) == dev && path_under(path, e->mp);
}

/* The length of the longest candidate's mountpoint shorter than limit,
 * 0 when there is none. */
static size_t next_len(const struct table *t, const struct entry *v,
		       const char *path, dev_t dev, size_t limit)
{
	size_t best = 0;
	for (size_t i = 0; i < t->n; i++) {
		size_t len;    /* a line that did not parse has no mp */
		if (candidate(&t->v[i], v, path, dev) &&
		    (len = strlen(t->v[i].mp)) < limit && len > best)
			best = len;
	}
	return best;
}

/* Of the candidates whose mountpoint is len long: the one fd is on, as a
 * handle says, else the only one no handle rules out; *n of those. */
static const struct entry *at_len(const struct table *t,
				  const struct entry *v, const char *path,
				  int fd, dev_t dev, size_t len, size_t *n)
{
	const struct entry *left = NULL;
	*n = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct entry *e = &t->v[i];
		if (!candidate(e, v, path, dev) || strlen(e->mp) != len)
			continue;
		int on = on_handle(fd, e);
		if (on == 1)
			return e;
		if (on < 0)
			left = (*n)++ ? NULL : e;
	}
	return left;
}

/* A descriptor beneath v: on another mount on dev whose mountpoint starts
 * path, the longest one, unless the broker's handles rule it out (fd is
 * then on its mountpoint, beneath it). */
static int beneath(const struct table *t, const struct entry *v,
		   const char *path, int fd, dev_t dev)
{
	size_t n = 0;
	for (size_t len = next_len(t, v, path, dev, SIZE_MAX); len && n < 2;
	     len = next_len(t, v, path, dev, len)) {
		const struct entry *e = at_len(t, v, path, fd, dev, len, &n);
		if (e)
			return e->id;
	}
	return -ENOENT;
}

/* Whether t is the kernel's table still: read from /proc/self/mountinfo,
 * with no change flagged on its watch since (a mount made between the
 * read and the descriptor's open would answer for the descriptor).  The
 * kernel flags a change once: the first seen lets the watch go. */
static bool current(struct table *t)
{
	struct pollfd p = { .fd = t->watch, .events = POLLPRI };
	if (t->watch >= 0 && poll(&p, 1, 0) != 0) {
		close(t->watch);
		t->watch = -1;
	}
	return t->watch >= 0;
}

/* The question asked of the caller's table while it is the kernel's,
 * sorted at its first question (many follow: the import's); else of one
 * read for the question alone, which a sort would not repay. */
int mountinfo_mnt_id(struct table *given, int fd)
{
	struct table own, *t = given && current(given) ? given : &own;
	struct stat st;
	char *path = fd_path(fd);
	int id = !path || path[0] != '/' || strstr(path, " (deleted)") ||
		 fd_stat(fd, &st) < 0 ? -ENOENT :
		 t == &own ? table_read(&own) : 0;
	if (id == 0) {
		if (t == given)
			table_sort(t);  /* -ENOMEM: the walk scans instead */
		const struct entry *v = table_walk(t, path);
		id = v && entry_dev(v) == st.st_dev && fd_reached(fd, path) ?
		     v->id : beneath(t, v, path, fd, st.st_dev);
		if (t == &own)
			table_free(&own);
	}
	free(path);
	return id;
}

/* Whether mount kid is in the kernel's table: not one unmounted with
 * MNT_DETACH that some descriptor still holds.  -1 (the table could not
 * name a descriptor's mount) is in none. */
bool kid_mounted(int kid)
{
	struct table t;
	bool in = kid > 0;
	if (in && table_read(&t) == 0) {
		in = table_find(&t, kid) != NULL;
		table_free(&t);
	}
	return in;
}

/* Whether fd, on mount kid, is on its root, where statx() cannot say
 * (before Linux 5.8): the path of a mount's root is its mountpoint, the
 * path of anything else in it longer.  The caller knows kid, which the
 * table alone may not tell (mountinfo_mnt_id()'s ENOENT). */
bool mountinfo_at_root(int fd, int kid)
{
	struct table t;
	char *path = fd_path(fd);
	bool root = false;
	if (path && kid > 0 && table_read(&t) == 0) {
		const struct entry *e = table_find(&t, kid);
		root = e && e->mp && strcmp(e->mp, path) == 0;
		table_free(&t);
	}
	free(path);
	return root;
}

/* Whether fd, on mount kid, is on its root: what a handle must be (a
 * directory inside a mount is another place of it, with the same mount
 * id).  statx() says it from Linux 5.8; before, mountinfo. */
bool fd_at_root(int fd, int kid)
{
	struct stat st;
	int k, root;
	if (fd_stat_kid(fd, &st, &k, &root) == 0 && root >= 0)
		return root;
	return mountinfo_at_root(fd, kid);
}

/* The mnt_id line of an fdinfo file, -ENODATA without one (before Linux
 * 3.15), or -errno. */
static int fdinfo_line(const char *fdinfo)
{
	char line[128];
	int id = -ENODATA;
	FILE *f = fopen(fdinfo, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "mnt_id: %d", &id) == 1)
			break;
	fclose(f);
	return kernel_lacks("no-fdinfo-mnt-id") ? -ENODATA : id;
}

/* Whether fdinfo says a descriptor's mount (Linux 3.15 on). */
bool fdinfo_has_mnt_id(void)
{
	int fd = open("/", O_PATH | O_CLOEXEC), id = -ENODATA;
	char path[64];
	if (fd >= 0) {
		snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
		id = fdinfo_line(path);
		close(fd);
	}
	return id != -ENODATA;
}

/* The mount of any process's descriptor, by its fdinfo path (.../fdinfo/N):
 * without the line, from the descriptor itself (.../fd/N). */
int fdinfo_mnt_id(const char *fdinfo)
{
	char path[PATH_MAX];
	const char *num = strrchr(fdinfo, '/');
	int id = fdinfo_line(fdinfo), fd;
	if (id != -ENODATA || !num || num - fdinfo < 6 ||
	    strncmp(num - 6, "fdinfo", 6) != 0)
		return id;
	snprintf(path, sizeof path, "%.*sfd%s", (int)(num - 6 - fdinfo),
		 fdinfo, num);
	if ((fd = open(path, O_PATH | O_CLOEXEC)) < 0)
		return -errno;
	id = fd_mnt_id(fd);
	close(fd);
	return id;
}

/* name_to_handle_at() (Linux 2.6.39) names the mount in one call where the
 * filesystem can make file handles: asked for a handle of no bytes it
 * answers EOVERFLOW and the mount id all the same.  fdinfo (four calls: a
 * path walk resolves a mount at every step) answers for the others (proc,
 * sysfs, devpts) and for kernels without it; mountinfo (mntid.c) for a
 * kernel with neither (no CONFIG_FHANDLE, before 3.15). */
int mntid_within(struct table *t, int fd)
{
	char path[64];
	struct file_handle fh = { .handle_bytes = 0 };
	int id = -1;
	if ((name_to_handle_at(fd, "", &fh, &id, AT_EMPTY_PATH) == 0 ||
	     errno == EOVERFLOW) && id >= 0)
		return id;
	snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
	id = fdinfo_line(path);
	return id == -ENODATA ? mountinfo_mnt_id(t, fd) : id;
}

int fd_mnt_id(int fd)
{
	return mntid_within(NULL, fd);
}

/* dir/name opened (O_PATH) if it is the root of mount kid; the lookup
 * ends on the top of the stack there, so a mount with anything on its
 * root is never found this way. */
int mount_root_open(int dir, const char *name, int kid)
{
	int fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fd_mnt_id(fd) == kid)
		return fd;
	close(fd);
	return -ESTALE;
}

/* mount_root_open()'s question in one call and no descriptor (busy.c
 * asks it of every mount it probes); the lookup is umount2()'s, which
 * follows no symlink at the end. */
int mount_root_at(int dir, const char *name, int kid)
{
	static bool mute;      /* statx() said no mount id once: never */
	struct stat st;
	int k, root;
	if (mute)
		return 0;
	if (name_stat_kid(dir, name, &st, &k, &root) < 0)
		return -errno;
	if (k < 0 || root < 0) {
		mute = true;
		return 0;
	}
	return k == kid && root ? 1 : -ESTALE;
}
