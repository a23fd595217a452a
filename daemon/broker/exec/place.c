/* place.c: the places the executor works at: a place of the graph opened
 * beneath its mount's handle, and the broker's own ground where a mount
 * waits (stage/N), is parked (park/N) or stands as a namespace's root
 * (ns/PID.ID, statedir.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker.h"
#include "base/base.h"
#include "base/log.h"
#include "exec/exec.h"
#include "hold/hold.h"
#include "persist/persist.h"

/* The caller's own lookup of place (m, dir), its target's or its
 * source's, which the request holds until its answer: a descriptor to
 * use without owning it (not a dup() and a close() more), or -1. */
int named_fd(const struct request *r, const struct mount *m, const char *dir,
	     bool target)
{
	const struct named *n = target ? r->target : r->source;
	return n && n->at.m == m && strcmp(n->at.dir, dir) == 0 ? n->fd : -1;
}

/* One step of open_loc()'s walk: name opened beneath *cur, which is
 * closed unless it is keep (the handle); -ELOOP for a symlink (swapped
 * in since the lookup), -EIO for another mount where mount kid is wanted
 * (covered: out of reach).  Status and mount id in one statx() where
 * the kernel says the id (Linux 5.8). */
static int walk_step(int *cur, int keep, const char *name, bool on, int kid)
{
	struct stat st;
	int id, root, fd = openat(*cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	int err = fd < 0 ? -errno : 0;
	if (*cur != keep)
		close(*cur);
	*cur = fd;
	if (err || fd_stat_kid(fd, &st, &id, &root) < 0)
		return err ? err : -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	return on && (id < 0 ? fd_mnt_id(fd) : id) != kid ? -EIO : 0;
}

/* A place (m, dir) as an O_PATH descriptor, walked from m's handle without
 * following symlinks or crossing into other mounts; a target may end on a
 * mount (the kernel mounts on the top of a stack anyway), a source may not.
 * A target that another mount covers on the way gives -EAGAIN and, in
 * *cover, the directory of m where that mount sits (see move_to()).  The
 * walk starts at the handle itself, a dup() of it only for m's root. */
int open_loc(struct request *r, struct mount *m, const char *dir,
	     bool target, int *out, char **cover)
{
	struct broker *b = r->b;
	int named = named_fd(r, m, dir, target);
	if (named >= 0) {
		*out = dup(named); /* the caller's own lookup: no second walk */
		return *out < 0 ? -errno : 0;
	}
	struct handle *h = handle_of(b, m);
	if (!h || !dir_under(dir, m->root)) {
		log_msg(LOG_WARNING, "mount %u: no handle on %s", m->id, dir);
		return -EIO;
	}
	const char *rel = strcmp(m->root, "/") == 0 ? dir : dir + strlen(m->root);
	int cur = h->fd, err = cur < 0 ? -EBADF : 0;
	while (!err) {
		while (*rel == '/')
			rel++;
		if (!*rel)
			break;
		size_t len = strcspn(rel, "/");
		char name[NAME_MAX + 1];
		if (len > NAME_MAX) {
			err = -ENAMETOOLONG;
			break;
		}
		memcpy(name, rel, len);
		name[len] = '\0';
		rel += len;
		bool last = !rel[strspn(rel, "/")];
		err = walk_step(&cur, h->fd, name, !(last && target), h->kid);
		if (err == -EIO && target && cover) {
			*cover = strndup(dir, (size_t)(rel - dir));
			err = *cover ? -EAGAIN : -ENOMEM;
		}
	}
	if (!err && cur == h->fd && (cur = dup(h->fd)) < 0)
		return -errno;     /* m's root itself */
	if (err && cur >= 0) {
		if (err != -EAGAIN)
			log_msg(LOG_WARNING, "mount %u: %s is out of reach", m->id, dir);
		if (cur != h->fd)
			close(cur);
	}
	if (err)
		return err;
	*out = cur;
	return 0;
}

/* Whether path is there as the kind of place a mount of m->file needs. */
static bool place_fits(const char *path, bool file)
{
	struct stat st;
	return lstat(path, &st) == 0 &&
	       (file ? S_ISREG(st.st_mode) : S_ISDIR(st.st_mode));
}

/* A place on the broker's own ground where a mount waits or is parked.
 * Sequence numbers start again with every broker: an entry of the name
 * may be left over (statedir.c sweeps at start, but could not remove it),
 * and one of the wrong kind goes first, else a file bind meets a
 * directory ("Is a directory"). */
int place_path(struct broker *b, const char *base, bool file,
		      char *buf, size_t size, uint64_t seq)
{
	snprintf(buf, size, "%s/%llu", base, (unsigned long long)seq);
	if (!place_fits(buf, file) && (unlink(buf) == 0 || rmdir(buf) == 0))
		log_msg(LOG_INFO, "%s: a leftover of the wrong kind, removed",
			buf);
	int fd = file ? open(buf, O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC,
			     0600)
		      : mkdir(buf, 0700);
	if (fd < 0 && errno != EEXIST)
		return -errno;
	if (file && fd >= 0)
		close(fd);
	(void)b;
	return place_fits(buf, file) ? 0 : -EEXIST;
}

/* Removes m's place under base once nothing is mounted on it any more:
 * not before (rmdir and unlink of a mountpoint are EBUSY, which is how
 * every directory bind used to leave its stage/N behind).  A place still
 * in use stays; the next start sweeps it. */
void drop_place(const char *base, const struct mount *m)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%llu", base, (unsigned long long)m->seq);
	if ((m->file ? unlink(path) : rmdir(path)) < 0 && errno != ENOENT &&
	    errno != EBUSY)
		log_msg(LOG_DEBUG, "%s: %s", path, strerror(errno));
}

/* The executor's step for a namespace's root (exec.c): the copy, staged
 * and held, moves to STATE/ns/PID.ID. */
int ns_place(struct broker *b, struct mount *m)
{
	char dir[PATH_MAX], src[64];
	ns_dir(b, NULL, dir, sizeof dir);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	ns_dir(b, m->ns, dir, sizeof dir);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	return mount(FDPATH(src, handle_of(b, m)->fd), dir, NULL, MS_MOVE,
		     NULL) < 0 ? -errno : 0;
}
