/* expire.c: umount2(MNT_EXPIRE) with the kernel's own mark (issue 29).
 *
 * The kernel marks an unused mount at the first MNT_EXPIRE and unmounts it
 * at the second, unless the mark went in between: every reference to the
 * mount dropped clears it (fs/namespace.c mntput(): an open, a stat, a
 * chdir, any lookup that ends on it, by any process); umount2 drops its
 * own with mntput_no_expire().  Every mount libshare manages is a real
 * mount, and every use of it, from the host or a jail, reaches that real
 * mount, so the kernel's mark on it says "unused since" exactly, which no
 * bookkeeping of the broker's could (a stat never reaches the broker).
 * So the kernel keeps the mark.  The first call is its own
 * umount2(MNT_EXPIRE) on the real mount (expiry_mark()): EAGAIN, marked,
 * or EBUSY.  The second is its own again, as the first unmount of a plain
 * umount's plan (umount.c, step.expire; expiry_step()): EAGAIN (used
 * since: marked anew) stops the plan before anything else went; success
 * is the kernel's unmount of that mount, and the plan goes on to its
 * copies as a plain umount's does, recorded and journalled as ever: a
 * broker killed after the kernel's unmount finishes the plan on restart
 * (recover.c: an unmount of the plan happened).  The other design, the
 * broker's own mark with the kernel's only probed, cannot be: the mark
 * cannot be read without MNT_EXPIRE, which unmounts a marked mount.
 *
 * What it asks of the broker: the kernel counts references (EBUSY beyond
 * the parent's and the call's own), and a handle is one; closing one is
 * a mntput.  So from the first call on the broker holds nothing on the
 * mount: its handle sleeps (fd -1, h->asleep, m->expiry_mark) and the
 * mount is reached by a lookup of its name in the directory it is
 * mounted in (place_set()), which drops no reference to it but
 * umount2's own.  Its
 * use is judged by busy.c's crawl of /proc, not by a probe, and a
 * caller's umount2 path is walked to the parent only, its last name read
 * from the graph (resolve.c).  It wakes (the handle taken again, which
 * clears the mark) only when the broker must hold it: a plan that
 * changes or reaches it, a caller's lookup that ended in it (which
 * cleared the mark already).  A sleeping mount's mark is whatever the
 * kernel has: sleeping longer than needed changes no answer.
 *
 * A restart: the sleepers are listed in <state dir>/expiry, written
 * before the kernel is asked to mark one, so that a broker killed right
 * after the kernel's EAGAIN does not take a handle on it again at import.
 * A line too many makes a mount sleep that need not, which is harmless.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "broker.h"
#include "base/base.h"
#include "base/log.h"
#include "base/mtparse.h"
#include "hold/hold.h"
#include "hold/holder.h"
#include "vec.h"

#ifndef UMOUNT_NOFOLLOW
#define UMOUNT_NOFOLLOW 8
#endif

static struct saved_sleeper {  /* the list read at start, until imported */
	int kid;
	unsigned maj, min;
	int file;
} *saved;
static size_t nsaved;

/* A handle on m that is held or sleeps (handle_of(): held only). */
struct handle *handle_known(const struct broker *b, const struct mount *m)
{
	struct handle *h;
	HASH_FIND(hh, b->by_seq, &m->seq, sizeof m->seq, h);
	return h && (h->fd >= 0 || h->asleep) ? h : NULL;
}

/* A sleeping mount's place: the directory the kernel has it mounted in
 * (an O_PATH descriptor, on its parent or below a stack) and its name
 * there, from path, where the kernel has it.  A lookup of the name there
 * ends on the top of the stack, which is the mount (it has no children),
 * and drops no reference to it but the lookup's own; the directory
 * follows renames and moves above it, as a handle does. */
static int place_set(struct handle *h, const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash && slash > path ?
		    strndup(path, (size_t)(slash - path)) : strdup("/");
	/* -fanalyzer: h->name is h's, freed by expiry_forget() */
	h->name = slash && slash[1] ? strdup(slash + 1) : NULL;
	h->place = dir && h->name ? open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)
				  : -1;
	int err = h->place < 0 ? (dir && h->name ? -errno : -ENOENT) : 0;
	free(dir);
	if (err)
		expiry_forget(h);
	return err;
}

/* A covered mount's place (its path leads to the cover, a mount on a
 * directory above it): the directory the kernel has it mounted in,
 * opened from its parent's handle, beneath the cover, and checked to be
 * in the parent.  A caller whose cwd is beneath the cover reaches the
 * mount, and its uses clear the kernel's mark there as anywhere.  A
 * mount on its parent's root has no name in it: -ENOENT. */
static int place_beneath(struct broker *b, struct handle *h)
{
	const struct mount *m = h->m, *p = m->parent;
	struct handle *ph = p ? handle_of(b, p) : NULL;
	if (!ph || !dir_under(m->mp, p->root) || strcmp(m->mp, p->root) == 0)
		return -ENOENT;
	const char *rel = m->mp + (strcmp(p->root, "/") ? strlen(p->root) : 0);
	const char *slash = strrchr(rel, '/');
	char *dir = strndup(rel + 1, (size_t)(slash - rel - (slash > rel)));
	h->name = strdup(slash + 1);
	h->place = dir && h->name ? openat(ph->fd, *dir ? dir : ".", O_PATH |
					   O_DIRECTORY | O_CLOEXEC) : -1;
	int err = h->place < 0 ? -ENOENT :
		  fd_mnt_id(h->place) != ph->kid ? -ESTALE : 0;
	free(dir);
	if (err)
		expiry_forget(h);
	return err;
}

/* A sleeper's place at import, from its path: no lookup of it (that
 * would clear the mark); a directory that is not in its parent is a
 * cover's, and the place is beneath it. */
static int place_import(struct broker *b, struct handle *h, const char *path)
{
	const struct mount *m = h->m, *p = m->parent;
	struct handle *ph = p ? handle_of(b, p) : NULL;
	int err = place_set(h, path);
	if (!err && (!ph || strcmp(m->mp, p->root) == 0 ||
		     fd_mnt_id(h->place) == ph->kid))
		return 0;
	expiry_forget(h);
	return place_beneath(b, h);
}

/* Where the kernel has a sleeping mount, malloc'ed; NULL when it cannot
 * be had. */
char *sleeper_path(const struct handle *h)
{
	char *dir = h->place >= 0 ? fd_path(h->place) : NULL, *out = NULL;
	if (dir && asprintf(&out, "%s/%s", strcmp(dir, "/") ? dir : "",
			    h->name) < 0)
		out = NULL;
	free(dir);
	return out;
}

/* The sleepers listed, whole, in <state dir>/expiry (removed when there
 * is none): "kid major:minor file" a line. */
static int list_save(struct broker *b)
{
	char path[4200], tmp[4208];
	unsigned n = 0;
	snprintf(path, sizeof path, "%s/" EXPIRY_LIST, b->state_dir);
	snprintf(tmp, sizeof tmp, "%s.new", path);
	FILE *f = fopen(tmp, "we");
	if (!f)
		return -errno;
	for (struct handle *h = b->by_seq; h; h = h->hh.next)
		if (h->asleep && ++n)
			fprintf(f, "%d %u:%u %d\n", h->kid, major(h->dev),
				minor(h->dev), h->m->file);
	b->nasleep = n;
	int err = fclose(f) ? -errno : 0;
	if (!err && n && rename(tmp, path) < 0)
		err = -errno;
	if (!n) {
		unlink(tmp);
		unlink(path);
	}
	return err;
}

/* At start, before the import: the list a previous broker left. */
void expiry_load(struct broker *b)
{
	char path[4200], *line = NULL;
	size_t cap = 0, size = 0;
	struct saved_sleeper s;
	snprintf(path, sizeof path, "%s/" EXPIRY_LIST, b->state_dir);
	FILE *f = fopen(path, "re");
	while (f && getline(&line, &size, f) > 0)
		if (sscanf(line, "%d %u:%u %d", &s.kid, &s.maj, &s.min,
			   &s.file) == 4 && VEC_PUSH(saved, nsaved, cap, s))
			break;
	free(line);
	if (f)
		fclose(f);
}

/* After the import: the list as the import found it (none: no file). */
void expiry_loaded(struct broker *b)
{
	if (nsaved)
		list_save(b);
	free(saved);
	saved = NULL;
	nsaved = 0;
}

/* A mount of the table at import that a previous broker left sleeping:
 * no lookup of it (it would clear the mark), a handle that sleeps.  0,
 * or -ENOENT when it is not one. */
int expiry_import(struct broker *b, struct entry *e)
{
	dev_t dev = entry_dev(e);
	struct handle *h;
	for (size_t i = 0; i < nsaved && e->m->parent; i++) {
		if (saved[i].kid != e->id || saved[i].maj != major(dev) ||
		    saved[i].min != minor(dev) ||
		    handle_put(b, e->m, -1, e->id, dev) < 0)
			continue;
		HASH_FIND(hh, b->by_seq, &e->m->seq, sizeof e->m->seq, h);
		if (!h)                /* handle_put() just added it */
			continue;
		h->asleep = e->m->expiry_mark = true;
		e->m->file = saved[i].file;
		if (place_import(b, h, e->mp) < 0)
			log_msg(LOG_WARNING, "mount %d on %s, marked to "
				"expire, cannot be reached", e->id, e->mp);
		return 0;
	}
	return -ENOENT;
}

/* Whether a mount a previous broker left sleeping is stacked on e's
 * place (at its mountpoint, e not it): a lookup of e's path would end on
 * the sleeper and clear its mark.  Sleepers have no children: the stack
 * is all at one mountpoint. */
bool expiry_above(struct entry **ix, size_t n, const struct entry *e)
{
	for (size_t i = 0; i < nsaved; i++) {
		const struct entry *s = entry_find(ix, n, saved[i].kid);
		if (s && s != e && strcmp(s->mp, e->mp) == 0)
			return true;
	}
	return false;
}

/* m's handle taken again (it leaves the list): its lookup clears the
 * kernel's mark, which the caller has cleared already or means to. */
static struct handle *expiry_wake(struct broker *b, struct mount *m)
{
	struct handle *h = handle_known(b, m);
	if (!h || !h->asleep)
		return h;
	int fd = h->place < 0 ? -ENOENT : mount_root_open(h->place, h->name,
						       h->kid);
	if (fd < 0) {
		log_msg(LOG_WARNING, "mount %d, marked to expire, cannot be "
			"reached: %s", h->kid, strerror(-fd));
		return NULL;
	}
	expiry_forget(h);
	h->fd = fd;
	h->asleep = m->expiry_mark = false;
	list_save(b);
	return h;
}

/* handle_of(), a sleeping mount woken for it. */
struct handle *handle_awake(struct broker *b, struct mount *m)
{
	struct handle *h = handle_of(b, m);
	return h ? h : expiry_wake(b, m);
}

/* umount2(MNT_EXPIRE) of a sleeping mount by the kernel, through its
 * place: 0 (it was marked, and is unmounted now) or -errno (EAGAIN:
 * marked now). */
static int kernel_expire(const struct handle *h)
{
	char path[64 + 4096];
	if (h->place < 0)
		return -ENOENT;
	if ((size_t)snprintf(path, sizeof path, "/proc/self/fd/%d/%s",
			     h->place, h->name) >= sizeof path)
		return -ENAMETOOLONG;
	return umount2(path, MNT_EXPIRE | UMOUNT_NOFOLLOW) < 0 ? -errno : 0;
}

/* Whether h's place leads to it (the lookup drops a reference: before
 * the mark); its place let go when not. */
static int place_check(struct handle *h)
{
	int fd = h->place < 0 ? -ENOENT : mount_root_open(h->place, h->name,
						       h->kid);
	if (fd < 0) {
		expiry_forget(h);
		return fd;
	}
	close(fd);
	return 0;
}

/* h's place, read from its handle's path and checked to lead to it; or,
 * covered, beneath the cover. */
static int place_of_handle(struct broker *b, struct handle *h)
{
	char *path = fd_path(h->fd);
	int err = path ? place_set(h, path) : -ENOENT;
	free(path);
	if (!err)
		err = place_check(h);
	if (err && !(err = place_beneath(b, h)))
		err = place_check(h);
	return err;
}

/* The first call, for a mount the engine found unmarked: the kernel's
 * own umount2(MNT_EXPIRE), the broker's descriptors on m let go for it
 * (the handle and the request's name).  Marked (EAGAIN), m sleeps,
 * listed before the kernel is asked.  A covered mount's place is beneath
 * its cover (place_beneath()); one still out of reach (stacked on its
 * parent's root, the stack's place covered) keeps the engine's mark, as
 * before issue 29: uses do not clear that. */
int expiry_mark(struct request *r, struct mount *m)
{
	struct broker *b = r->b;
	struct handle *h = handle_of(b, m);
	int err = h ? place_of_handle(b, h) : -EIO;
	if (err) {
		m->expiry_mark = true;
		return -EAGAIN;
	}
	h->asleep = true;          /* listed first: the kernel may mark it */
	if ((err = list_save(b))) {
		h->asleep = false;
		expiry_forget(h);
		return err;
	}
	if (r->target && r->target->at.m == m && r->target->fd >= 0) {
		close(r->target->fd);
		r->target->fd = -1;
	}
	close(h->fd);
	h->fd = -1;
	err = kernel_expire(h);
	if (err == -EAGAIN)
		m->expiry_mark = true;
	else if (err)              /* busy: held again, as before */
		expiry_wake(b, m);
	else                       /* marked behind the broker's back */
		log_msg(LOG_WARNING, "mount %d was marked to expire behind the "
			"broker's back: the kernel unmounted it", h->kid);
	return err;
}

/* The unmount of step.expire (umount.c): the kernel's second
 * MNT_EXPIRE.  0: it unmounted m (the mark held: no use since the first
 * call), which stays listed until the plan's end drops its handle;
 * -EAGAIN: used since, marked anew, and the plan stops with nothing
 * else done.  A mount awake here has the engine's mark alone (place
 * unnamed at the first call): a plain umount. */
int expiry_step(struct request *r, struct mount *m)
{
	struct handle *h = handle_known(r->b, m);
	char at[64];
	if (h && !h->asleep) {
		snprintf(at, sizeof at, "/proc/self/fd/%d", h->fd);
		return umount2(at, MNT_DETACH) < 0 ? -errno : 0;
	}
	return h ? kernel_expire(h) : -EIO;
}

/* Before a plan runs: every sleeping mount its steps name is woken (the
 * executor needs its handle), but the one its expire step asks about. */
int expiry_wake_plan(struct request *r)
{
	struct broker *b = r->b;
	for (size_t i = 0; b->nasleep && i < b->g.nsteps; i++) {
		const struct step *s = &b->g.steps[i];
		unsigned id[3] = { s->expire ? 0 : s->mnt, s->src, s->parent };
		for (size_t k = 0; k < 3; k++) {
			struct mount *m = id[k] ? mount_by_id(&b->g, id[k])
					      : NULL;
			struct handle *h = m ? handle_known(b, m) : NULL;
			if (h && h->asleep && !expiry_wake(b, m))
				return -EIO;
		}
	}
	return 0;
}
