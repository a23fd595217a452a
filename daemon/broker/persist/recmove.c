/* recmove.c: what recovery does in the kernel (recover.c decides): the
 * mounts of an interrupted plan found by their kernel ids, moved back or
 * on, and detached.
 *
 * A mount is reached through a descriptor when there is one: the
 * previous broker's holder keeps those that were covered when it died
 * (holder.c), and recovery keeps every mount its own moves cover (a
 * covering mount put back from its park place, a mount moved back under
 * another).  Both are handed to the import (recover_take()): a mount that
 * recovery covers is out of reach of its path, and the holder did not
 * keep it, since it was on top when the broker died.  Otherwise a walk
 * from / that follows no symlink: a jail may have planted one in a path
 * since.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker.h"
#include "base/base.h"
#include "base/mtparse.h"
#include "hold/holder.h"
#include "persist/persist.h"
#include "persist/recover.h"
#include "vec.h"

/* Mount kid on dev in t, or NULL. */
static struct entry *entry_of(const struct table *t, int kid, dev_t dev)
{
	struct entry *e = kid > 0 ? table_find(t, kid) : NULL;
	return e && entry_dev(e) == dev ? e : NULL;
}

/* The kernel's line of mount kid on dev, from a fresh read: its
 * mountpoint (malloc'ed), or NULL when the kernel has no such mount. */
static char *rec_where(int kid, dev_t dev)
{
	struct table t;
	if (kid <= 0 || table_read(&t) < 0)
		return NULL;
	struct entry *e = entry_of(&t, kid, dev);
	char *mp = e ? strdup(e->mp) : NULL;
	table_free(&t);
	return mp;
}

/* path opened O_PATH by a walk from dir (closed) that follows no
 * symlink. */
static int walk_from(int dir, const char *path)
{
	int cur = dir;
	char name[256];
	while (cur >= 0 && *path) {
		size_t len = strcspn(path, "/");
		if (len == 0 || len >= sizeof name) {
			path += len ? len : 1;
			if (len >= sizeof name) {
				close(cur);
				return -ENAMETOOLONG;
			}
			continue;
		}
		memcpy(name, path, len);
		name[len] = '\0';
		path += len;
		int fd = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		close(cur);
		if (fd >= 0 && (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode))) {
			close(fd);
			return -ELOOP;
		}
		cur = fd;
	}
	return cur < 0 ? -errno : cur;
}

int walk_path(const char *path)
{
	return walk_from(open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), path);
}

/* Mount kid's parent (*pid, *pdev) and its place below the parent's
 * mountpoint (malloc'ed, "" for none), from a fresh read; -ENOENT. */
static int parent_of(int kid, dev_t dev, int *pid, dev_t *pdev, char **rel)
{
	struct table t;
	int err = -ENOENT;
	if (table_read(&t) < 0)
		return -ENOENT;
	struct entry *e = entry_of(&t, kid, dev);
	struct entry *p = e ? table_find(&t, e->parent) : NULL;
	if (p && !p->mp)
		p = NULL;             /* a line that did not parse */
	size_t len = p && strcmp(p->mp, "/") ? strlen(p->mp) : 0;
	if (p && strncmp(e->mp, p->mp, len) == 0) {
		*pid = p->id;
		*pdev = entry_dev(p);
		err = (*rel = strdup(e->mp + len)) ? 0 : -ENOMEM;
	}
	table_free(&t);
	return err;
}

static int open_kid_at(int kid, dev_t dev, int depth);

/* Mount kid reached from its parent's root, when another mount covers its
 * place (a copy bound in place under a covering mount, before its
 * descriptor was recorded): the parent is open through the holder or
 * recovery's own keeping. */
static int via_parent(int kid, dev_t dev, int depth)
{
	int pid = 0, pfd, fd;
	dev_t pdev = 0;
	char *rel = NULL;
	if (depth > 8 || parent_of(kid, dev, &pid, &pdev, &rel) < 0 ||
	    pid == kid || (pfd = open_kid_at(pid, pdev, depth)) < 0) {
		free(rel);
		return -EBUSY;
	}
	fd = walk_from(pfd, rel);
	free(rel);
	if (fd >= 0 && fd_mnt_id(fd) != kid) {
		close(fd);
		return -EBUSY;
	}
	return fd;
}

/* The mount kid itself (its root), opened: through a descriptor kept
 * (above, or by the holder), else by its place or from its parent's
 * root; -ENOENT when the kernel has no such mount any more, -EBUSY when
 * it is out of reach. */
static int open_kid_at(int kid, dev_t dev, int depth)
{
	char *mp = rec_where(kid, dev);
	int fd = -ENOENT;
	if (mp && (fd = recover_kept(kid, dev)) == -ENOENT &&
	    (fd = holder_take(kid, dev)) < 0)
		fd = walk_path(mp);
	free(mp);
	if (fd >= 0 && fd_mnt_id(fd) != kid) {
		close(fd);
		return via_parent(kid, dev, depth + 1);
	}
	return fd;
}

static int open_kid(int kid, dev_t dev)
{
	return open_kid_at(kid, dev, 0);
}

/* A park place that the plan's end removed already, made again. */
static void remake(const struct broker *b, const char *place, int fd)
{
	struct stat st;
	char *park = realpath(b->park, NULL);
	size_t n = park ? strlen(park) : 0;
	bool ours = park && !strncmp(place, park, n) && place[n] == '/' &&
		    !strchr(place + n + 1, '/');
	free(park);
	if (!ours || fstat(fd, &st) < 0)
		return;
	if (S_ISDIR(st.st_mode))
		mkdir(place, 0700);
	else
		close(open(place, O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC,
			   0600));
}

/* Mount s->kid moved to place, unless it is there. */
int rec_move(const struct broker *b, const struct rstep *s, const char *place)
{
	char *now = rec_where(s->kid, s->dev), from[64], to[64];
	int err = 0, fd, at = -1;
	if (!now || !place || strcmp(now, place) == 0) {
		free(now);
		return now ? 0 : -ENOENT;
	}
	free(now);
	if ((fd = open_kid(s->kid, s->dev)) < 0)
		return fd;
	remake(b, place, fd);
	if ((at = walk_path(place)) < 0)
		err = at;
	else
		recover_keep(at);
	snprintf(from, sizeof from, "/proc/self/fd/%d", fd);
	snprintf(to, sizeof to, "/proc/self/fd/%d", at);
	if (!err && mount(from, to, NULL, MS_MOVE, NULL) < 0)
		err = -errno;
	close(fd);
	if (at >= 0)
		close(at);
	return err;
}

/* Mount s->kid detached, if the kernel still has it. */
int rec_drop(const struct rstep *s)
{
	char at[64];
	int fd = open_kid(s->kid, s->dev);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	snprintf(at, sizeof at, "/proc/self/fd/%d", fd);
	int err = umount2(at, MNT_DETACH) < 0 ? -errno : 0;
	close(fd);
	return err;
}

/* Whether the step in flight when the broker died had happened. */
bool rec_happened(const struct rstep *s)
{
	char *now;
	bool yes = false;
	switch (s->kind) {
	case STEP_NEW:
	case STEP_BIND:
		return s->prog == 'S' || (s->prog == 'P' && s->kid > 0);
	case STEP_UMOUNT:
		now = rec_where(s->kid, s->dev);
		yes = !now;
		break;
	case STEP_MOVE:
	case STEP_PARK:
		now = rec_where(s->kid, s->dev);
		yes = now && s->to && strcmp(now, s->to) == 0;
		break;
	default:
		return false;
	}
	free(now);
	return yes;
}

/* Copies made on their places (copy.c) before the broker died, without
 * their kernel ids recorded ("P"): each the mount of its source's
 * superblock at its place whose parent is the mount that was on top of
 * it then (nothing else can be its child there).  s[i].kid, or 0.  A
 * batch's copies are n such steps (execplan.c): the table is read once. */
void rec_find_copies(struct rstep *s, size_t n)
{
	struct table t;
	if (!n || table_read(&t) < 0)
		return;
	for (size_t k = 0; k < n; k++) {
		if (s[k].prog != 'P' || !s[k].to)
			continue;
		for (size_t i = 0; i < t.n && !s[k].kid; i++) {
			const struct entry *e = &t.v[i];
			if (e->id && e->parent == s[k].top &&
			    entry_dev(e) == s[k].dev &&
			    strcmp(e->mp, s[k].to) == 0)
				s[k].kid = e->id;
		}
	}
	table_free(&t);
}
