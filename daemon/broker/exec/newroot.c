/* newroot.c: NEWROOT, the root of the child that makes a new filesystem
 * for a caller (newmount.c).
 *
 *   NEWROOT/.t    the staging place: the child's cwd and the mount's target
 *   NEWROOT/.o/N  a bind of an object the caller named (a device node, an
 *                 overlay layer), or .o/gN of a directory holding several
 *                 of them on one mount (overlay wants upperdir and workdir
 *                 on one mount, as the caller's are)
 *   the rest      directories and symlinks laid out so that each path,
 *                 spelled as the caller spelled it (absolute from the
 *                 child's root, relative from .t), leads to its object
 *
 * Nothing in NEWROOT is outside the caller's root but empty directories and
 * symlinks of the broker's own.  A path that cannot be laid out as spelled
 * (two spellings of different objects meeting at one name) is given to the
 * kernel as its object's place instead; only the kernel's own table then
 * shows that name rather than the caller's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/base.h"
#include "exec/exec.h"
#include "exec/newmount.h"

static bool same_inode(int a, int b)
{
	struct stat sa, sb;
	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static void swap_fd(int *cur, int fd)
{
	close(*cur);
	*cur = fd;
}

/* Binds the object at fd on NEWROOT/.o/name, and names it there. */
static int bind_at(struct broker *b, int fd, const char *name, char **where)
{
	char at[PATH_MAX], src[64];
	struct stat st;
	int f = -1;
	snprintf(at, sizeof at, "%s/.o/%s", b->newroot, name);
	snprintf(src, sizeof src, "/proc/self/fd/%d", fd);
	if (fstat(fd, &st) < 0 ||
	    (S_ISDIR(st.st_mode) ? mkdir(at, 0700) :
	     (f = open(at, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600))) < 0)
		return -errno;
	if (f >= 0)
		close(f);
	if (mount(src, at, NULL, MS_BIND, NULL) < 0)
		return -errno;
	return asprintf(where, "/.o/%s", name) < 0 ? -ENOMEM : 0;
}

/* The directory depth levels above fd, or -1. */
static int up(int fd, int depth)
{
	int cur = dup(fd);
	while (cur >= 0 && depth-- > 0)
		swap_fd(&cur, openat(cur, "..", O_PATH | O_DIRECTORY |
				     O_CLOEXEC));
	return cur;
}

/* Directories of the caller's on one mount share one bind of the deepest
 * directory above them all, if that is inside the caller's root. */
static int bind_group(struct request *r, struct newreq *q, size_t first,
		      char **paths, const bool *mine, int k)
{
	struct broker *b = r->b;
	const char *p0 = paths[first];
	size_t plen = strlen(p0);
	for (size_t i = first + 1; i < q->nobj; i++) {
		size_t n = 0;
		while (mine[i] && n < plen && p0[n] == paths[i][n])
			n++;
		if (mine[i] && !(n == plen && (!paths[i][n] ||
					       paths[i][n] == '/')))
			while (n > 0 && p0[n] != '/')
				n--;   /* back to a whole name */
		if (mine[i])
			plen = n;
	}
	int depth = 0;
	for (size_t c = plen; p0[c]; c++)
		depth += p0[c] == '/' && p0[c + 1];
	int anc = up(q->obj[first].fd, depth);
	char *top = anc >= 0 ? fd_path(anc) : NULL, name[16];
	bool ok = top && strlen(top) == (plen ? plen : 1) &&
		  strncmp(top, p0, strlen(top)) == 0 &&
		  fd_mnt_id(anc) == fd_mnt_id(q->obj[first].fd) &&
		  fd_within(anc, r->caller.root);
	char *where = NULL;
	int err = 0;
	snprintf(name, sizeof name, "g%d", k);
	if (ok && !(err = bind_at(b, anc, name, &where))) {
		for (size_t i = first; i < q->nobj && !err; i++)
			if (mine[i] && asprintf(&q->obj[i].where, "%s%s", where,
					       paths[i] + plen) < 0)
				err = -ENOMEM;
	}
	free(where);
	free(top);
	if (anc >= 0)
		close(anc);
	return err;
}

/* Every object gets its place in NEWROOT/.o: a group's, or its own. */
static int bind_objects(struct request *r, struct newreq *q)
{
	struct broker *b = r->b;
	char *paths[MAXPATHS] = { 0 }, name[16];
	bool mine[MAXPATHS];
	int err = 0, k = 0;
	for (size_t i = 0; i < q->nobj; i++) {
		struct stat st;
		paths[i] = fstat(q->obj[i].fd, &st) == 0 &&
			   S_ISDIR(st.st_mode) ? fd_path(q->obj[i].fd) : NULL;
	}
	for (size_t i = 0; i < q->nobj && !err; i++) {
		size_t n = 0;
		int kid = fd_mnt_id(q->obj[i].fd);
		for (size_t j = 0; j < q->nobj; j++) {
			mine[j] = j >= i && paths[j] && !q->obj[j].where &&
				  fd_mnt_id(q->obj[j].fd) == kid;
			n += mine[j];
		}
		if (n > 1 && mine[i])
			err = bind_group(r, q, i, paths, mine, k++);
		if (!err && !q->obj[i].where) {
			snprintf(name, sizeof name, "%zu", i);
			err = bind_at(b, q->obj[i].fd, name, &q->obj[i].where);
		}
	}
	for (size_t i = 0; i < q->nobj; i++)
		free(paths[i]);
	return err;
}

/* Makes path, read from NEWROOT (absolute) or from .t (relative), lead to
 * where: its last name a symlink there, the names before it directories.
 * False when it cannot (another spelling took a name, or path names a
 * directory of the layout itself). */
static bool place(int root, int t, const char *path, const char *where)
{
	int dir = dup(path[0] == '/' ? root : t);
	bool ok = false;
	for (const char *s = path; dir >= 0; ) {
		char name[NAME_MAX + 1], link[PATH_MAX];
		s += strspn(s, "/");
		size_t n = strcspn(s, "/");
		const char *next = s + n + strspn(s + n, "/");
		bool dots = n && s[0] == '.' && (n == 1 || (n == 2 && s[1] == '.'));
		if (!n || n > NAME_MAX || (dots && !*next))
			break;         /* names a directory: not a link */
		memcpy(name, s, n);
		name[n] = '\0';
		s = next;
		if (dots) {
			if (n == 2 && !same_inode(dir, root))
				swap_fd(&dir, openat(dir, "..", O_PATH |
						     O_DIRECTORY | O_CLOEXEC));
			continue;
		}
		if (same_inode(dir, root) && strcmp(name, ".o") == 0)
			break;         /* never into the caller's objects */
		if (!*next) {
			ssize_t l;
			ok = symlinkat(where, dir, name) == 0 ||
			     (errno == EEXIST &&
			      (l = readlinkat(dir, name, link, sizeof link - 1)) > 0 &&
			      (link[l] = '\0', strcmp(link, where) == 0));
			break;
		}
		int fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_DIRECTORY |
				O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && mkdirat(dir, name, 0700) == 0)
			fd = openat(dir, name, O_PATH | O_NOFOLLOW |
				    O_DIRECTORY | O_CLOEXEC);
		/* a symlink laid out for a shorter path: the rest is read
		 * inside that object, as the caller's path is */
		if (fd < 0) {
			ok = errno == ELOOP || errno == ENOTDIR;
			break;
		}
		swap_fd(&dir, fd);
	}
	if (dir >= 0)
		close(dir);
	return ok;
}

int newroot_layout(struct request *r, struct newreq *q)
{
	struct broker *b = r->b;
	char at[PATH_MAX];
	snprintf(at, sizeof at, "%s/.o", b->newroot);
	if (q->nobj && mkdir(at, 0700) < 0 && errno != EEXIST)
		return -errno;
	snprintf(at, sizeof at, "%s/.t", b->newroot);
	if ((q->tdir = open(at, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	if (!q->nobj && !q->nref)
		return 0;      /* a tmpfs's: nothing to lay out in NEWROOT */
	int root = open(b->newroot, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int err = root < 0 ? -errno : bind_objects(r, q);
	for (size_t i = 0; !err && i < q->nref; i++)
		q->ref[i].placed = place(root, q->tdir, q->ref[i].path,
					 q->obj[q->ref[i].obj].where);
	if (root >= 0)
		close(root);
	return err;
}

/* Empties NEWROOT/.o: each entry unmounted, then removed, never entered
 * (it may still be the caller's, should the unmount fail). */
static void clear_objects(int dir)
{
	int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	for (struct dirent *e; d && (e = readdir(d)); ) {
		char proc[PATH_MAX];
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(proc, sizeof proc, "/proc/self/fd/%d/%s", dir,
			 e->d_name);
		while (umount2(proc, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
			;
		if (unlinkat(dir, e->d_name, AT_REMOVEDIR) < 0 &&
		    errno == ENOTDIR)
			unlinkat(dir, e->d_name, 0);
	}
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
}

/* Empties a directory of the layout: directories and symlinks of the
 * broker's own, on NEWROOT's filesystem (kid); at the top (NEWROOT) .t
 * stays and .o is emptied as objects. */
static void clear_tree(int dir, int kid, bool top)
{
	int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	for (struct dirent *e; d && (e = readdir(d)); ) {
		const char *name = e->d_name;
		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
		    (top && strcmp(name, ".t") == 0))
			continue;
		int sub = openat(dir, name, O_PATH | O_NOFOLLOW | O_DIRECTORY |
				 O_CLOEXEC);
		if (sub >= 0 && top && strcmp(name, ".o") == 0)
			clear_objects(sub);
		else if (sub >= 0 && fd_mnt_id(sub) == kid)
			clear_tree(sub, kid, false);
		if (sub >= 0)
			close(sub);
		unlinkat(dir, name, sub >= 0 ? AT_REMOVEDIR : 0);
	}
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
}

/* What the request laid out goes; one that named no path (a tmpfs)
 * laid out nothing, and what an earlier one may have failed to clear
 * is cleared by the next that does. */
void newroot_clear(struct broker *b, struct newreq *q)
{
	if (!q->nobj && !q->nref) {
		if (q->tdir >= 0)
			close(q->tdir);
		q->tdir = -1;
		return;
	}
	int root = open(b->newroot, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int kid = root >= 0 ? fd_mnt_id(root) : -1;
	if (root >= 0)
		clear_tree(root, kid, true);
	if (q->tdir >= 0) {
		clear_tree(q->tdir, kid, false);
		close(q->tdir);
		q->tdir = -1;
	}
	if (root >= 0)
		close(root);
}

/* NEWROOT as a request needs it, whatever a broker before this one left:
 * .t with nothing on it or in it, and nothing else. */
int newmount_reset(struct broker *b)
{
	char at[PATH_MAX];
	struct newreq q = { .tdir = -1 };
	snprintf(at, sizeof at, "%s/.t", b->newroot);
	if (mkdir(b->newroot, 0700) < 0 && errno != EEXIST)
		return -errno;
	while (umount2(at, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
		;
	if (mkdir(at, 0700) < 0 && errno != EEXIST)
		return -errno;
	if ((q.tdir = open(at, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	newroot_clear(b, &q);
	return 0;
}
