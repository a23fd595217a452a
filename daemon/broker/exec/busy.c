/* busy.c: which mounts are in use, as the kernel's umount would judge it
 * (semantics.md 5.3).
 *
 * The kernel's own test is asked first: umount2(MNT_EXPIRE) answers EBUSY
 * when a mount has more references than an unused one (its parent's, and
 * the lookup's), and EAGAIN otherwise, leaving only an expiry mark that the
 * next mntput clears (fs/namespace.c do_umount, mntput).  The broker's own
 * references would make every mount busy: its handle (an O_PATH descriptor
 * on the mount's root) and the request's named places there.  So the probe
 * lets them go for its one call, reaches the mount through its mountpoint
 * in the parent (a directory opened from the parent's handle, which holds
 * nothing on the mount itself) and takes the handle again.  The last
 * close of a reference of the broker's clears any mark (mntput()), and
 * the kernel finds the mount unused only once all are closed, so the
 * probe can never be the second MNT_EXPIRE that unmounts.  That the
 * mountpoint leads to the mount is asked first: statx() of the name
 * (Linux 5.8), else the mount opened there and closed.  A few system
 * calls per mount, whatever the number of processes (issue 10 item 4).
 *
 * Where that cannot be arranged (a mount on its parent's root, one whose
 * mountpoint moved or is covered, a parent the broker cannot reach, a
 * mount whose handle sleeps for MNT_EXPIRE's mark: expire.c), the
 * old way answers: a crawl of /proc for a process other than the broker
 * with its cwd, root, executable, an open or a mapped file on the mount,
 * or a thread with its own cwd or root there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>
#include "broker.h"
#include "base/base.h"
#include "base/log.h"
#include "exec/exec.h"
#include "hold/hold.h"
#include "hold/holder.h"
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

/* The directory (an O_PATH descriptor) m is mounted on, opened from its
 * parent's handle, and in *name the mountpoint's last component.  On the
 * parent's root, the handle itself (*own false): nothing to open; the
 * probe closes only the child's handle, never its parent's. */
static int mountpoint_dir(struct request *r, const struct mount *m,
			  const char **name, bool *own)
{
	const struct mount *p = m->parent;
	struct handle *ph = p ? handle_of(r->b, p) : NULL;
	if (!ph)
		return -ENOENT;
	size_t n = strcmp(p->root, "/") == 0 ? 0 : strlen(p->root);
	if (strncmp(m->mp, p->root, n) != 0 || m->mp[n] != '/' || !m->mp[n + 1])
		return -ENOENT;        /* on the parent's root: a stack */
	const char *rel = m->mp + n + 1, *slash = strrchr(rel, '/');
	*name = slash ? slash + 1 : rel;
	if (!(*own = slash != NULL))
		return ph->fd >= 0 ? ph->fd : -EBADF;   /* asleep: expire.c */
	char *dir = strndup(rel, (size_t)(slash - rel));
	if (!dir)
		return -ENOMEM;
	int fd = openat(ph->fd, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	return fd < 0 ? -errno : fd;
}

/* The request's named places on m: descriptors the probe must let go. */
static struct named **own_names(struct request *r, const struct mount *m,
				struct named **v)
{
	struct named *n[2] = { r->target, r->source };
	for (size_t i = 0; i < 2; i++)
		if (n[i] && n[i]->fd >= 0 && n[i]->at.m == m &&
		    (i == 0 || n[1] != n[0]))
			*v++ = n[i];
	return v;
}

/* 1: the kernel calls h's mount busy; 0: not; negative: not asked. */
static int probe(struct request *r, struct handle *h)
{
	struct named *held[2], **end;
	const char *name;
	char path[64 + 256];
	bool own;
	int dir = mountpoint_dir(r, h->m, &name, &own), fd, err;
	if (dir < 0)
		return dir;
	fd = (size_t)snprintf(path, sizeof path, "/proc/self/fd/%d/%s", dir,
			      name) >= sizeof path ? -ENAMETOOLONG :
	     mount_root_at(dir, name, h->kid);
	if (fd == 0 && (fd = mount_root_open(dir, name, h->kid)) >= 0)
		close(fd);
	if (fd < 0) {
		if (own)
			close(dir);
		return fd;
	}
	end = own_names(r, h->m, held);
	for (struct named **n = held; n < end; n++) {
		close((*n)->fd);
		(*n)->fd = -1;
	}
	holder_note(h->fd, -1);
	close(h->fd);
	/* Without file handles or fdinfo's mnt_id, mount_root_open() asks
	 * mntid.c, which asks the handles: a closed number there answers
	 * EBADF and rules the mount out (oldest-diff's seed 100051 lost a
	 * bind that way), or, reused by the open, in by chance. */
	h->fd = -1;
	err = umount2(path, MNT_EXPIRE | UMOUNT_NOFOLLOW) == 0 ? -EIO :
	      errno == EBUSY ? 1 : errno == EAGAIN ? 0 : -errno;
	h->fd = mount_root_open(dir, name, h->kid);   /* clears the probe's mark */
	holder_note(h->fd, h->kid);
	if (h->fd < 0) {
		log_msg(LOG_WARNING, "mount %d went while its use was probed "
			"(%s): out of the broker's reach", h->kid,
			strerror(-h->fd));
		h->fd = -1;
		err = 1;
	}
	for (struct named **n = held; n < end && h->fd >= 0; n++)
		(*n)->fd = dup(h->fd);
	if (own)
		close(dir);
	return err;
}

bool mount_busy(void *ctx, const struct mount *m)
{
	struct request *r = ctx;
	struct handle *h = handle_known(r->b, m);
	if (!h)
		return true;   /* out of reach: never unmounted behind a use */
	/* A sleeping mount (expire.c) is not probed: the probe's MNT_EXPIRE
	 * would unmount it, were it marked, and the handle taken again
	 * would clear its mark. */
	int probed = h->asleep ? -EAGAIN : probe(r, h);
	if (probed >= 0)
		return probed;
	if (!r->busy_known)
		scan_busy(r);
	if (r->busy_all)
		return true;
	return bsearch(&h->kid, r->busy_kids, r->nbusy, sizeof h->kid,
		       cmp_int) != NULL;
}
