/* handle.c: the broker's hold on the mounts of its graph: an O_PATH
 * descriptor on each one's root (broker.h), found by the graph's mount or
 * by the kernel's mount id, and the superblocks they are on; and a
 * caller's named place taken to the handle of the top of its stack.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker.h"

/* The filesystem of the graph that the kernel's superblock dev is, while
 * some held mount uses it: a new mount of the same superblock (a block
 * device mounted again, sysfs) joins it, as in the kernel. */
struct fs *fs_of_dev(const struct broker *b, dev_t dev)
{
	struct devref *d;
	HASH_FIND(hh, b->devs, &dev, sizeof dev, d);
	return d ? d->fs : NULL;
}

static void devref(struct broker *b, struct handle *h, int delta)
{
	struct devref *d;
	HASH_FIND(hh, b->devs, &h->dev, sizeof h->dev, d);
	if (!d && delta > 0 && (d = calloc(1, sizeof *d))) {
		d->dev = h->dev;
		d->fs = h->m->fs;
		HASH_ADD(hh, b->devs, dev, sizeof d->dev, d);
	}
	if (d && (d->n += delta) == 0) {
		HASH_DEL(b->devs, d);
		free(d);
	}
}

/* A handle on m; fd -1 for a mount the kernel has but the broker cannot
 * reach (covered when it was imported): known by its id, never used. */
int handle_put(struct broker *b, struct mount *m, int fd, int kid,
		      dev_t dev)
{
	struct handle *h = calloc(1, sizeof *h);
	if (!h)
		return -ENOMEM;
	h->seq = m->seq;
	h->fd = fd;
	h->kid = kid;
	h->dev = dev;
	h->m = m;
	HASH_ADD(hh, b->by_seq, seq, sizeof h->seq, h);
	HASH_ADD(hk, b->by_kid, kid, sizeof h->kid, h);
	HASH_ADD(hp, b->by_ptr, m, sizeof h->m, h);
	devref(b, h, 1);
	return 0;
}

int handle_add(struct broker *b, struct mount *m, int fd)
{
	struct stat st;
	int kid = fd_mnt_id(fd);
	if (kid < 0)
		return kid;
	if (fd_stat(fd, &st) < 0)
		return -errno;
	/* what the table does not say: a file's mount (imported, or taken
	 * from the holder) may take only a file's place (semantics 3.1) */
	m->file = !S_ISDIR(st.st_mode);
	return handle_put(b, m, fd, kid, st.st_dev);
}

/* The graph renumbered its mounts (graph_reorder()): by_seq follows. */
void handle_rekey(struct broker *b)
{
	struct handle *all = b->by_seq, *h, *next;
	b->by_seq = NULL;
	for (h = all; h; h = next) {
		next = h->hh.next;
		HASH_DELETE(hh, all, h);
		h->seq = h->m->seq;
		HASH_ADD(hh, b->by_seq, seq, sizeof h->seq, h);
	}
}

struct handle *handle_of(const struct broker *b, const struct mount *m)
{
	struct handle *h;
	HASH_FIND(hh, b->by_seq, &m->seq, sizeof m->seq, h);
	return h && h->fd >= 0 ? h : NULL;
}

/* The mount p is, if it is one the broker holds: p is only compared,
 * never followed (it may point anywhere). */
struct mount *mount_at_ptr(const struct broker *b, const void *p)
{
	struct handle *h;
	HASH_FIND(hp, b->by_ptr, &p, sizeof p, h);
	return h && h->fd >= 0 ? h->m : NULL;
}

struct mount *mount_of_kid(const struct broker *b, int kid)
{
	struct handle *h;
	HASH_FIND(hk, b->by_kid, &kid, sizeof kid, h);
	return h ? h->m : NULL;
}

void handle_drop(struct broker *b, struct handle *h)
{
	devref(b, h, -1);
	HASH_DELETE(hh, b->by_seq, h);
	HASH_DELETE(hk, b->by_kid, h);
	HASH_DELETE(hp, b->by_ptr, h);
	if (h->fd >= 0)
		close(h->fd);
	free(h);
}

/* A name's descriptor and directory go (resolve() made them). */
void named_free(struct named *n)
{
	if (n->fd >= 0)
		close(n->fd);
	free(n->buf);
	n->fd = -1;
	n->buf = NULL;
}

/* Takes n to the topmost mount on its place.  The walk crosses into the
 * top of a stack at every name it opens, ".." included (fs/namei.c
 * handle_dots() steps into the parent's mounts); only where it opened no
 * name at the end ("." and a trailing "/." from the caller's cwd or root,
 * "/") is it still beneath a stack: a cwd that was covered since keeps the
 * dentry beneath.  Then the kernel goes to the top for umount's last
 * component (LOOKUP_MOUNTPOINT, handle_lookup_down()) and for the place a
 * new mount, a bind, a move or pivot_root's put_old goes (do_lock_mount()),
 * not for a bind's or a move's source, pivot_root's new_root, a remount
 * or a change of type (docs/semantics.md 3.2, 5.1, 7). */
int named_top(struct broker *b, struct named *n)
{
	struct mount *m = n->at.m, *c;
	const char *dir = n->at.dir;
	while ((c = mount_at(&b->g, m, dir))) {
		m = c;
		dir = c->root;
	}
	if (m == n->at.m)
		return 0;
	struct handle *h = handle_of(b, m);
	int fd = h ? dup(h->fd) : -1;
	char *buf = strdup(m->root);
	if (fd < 0 || !buf) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return h ? -ENOMEM : -EIO;
	}
	named_free(n);
	n->fd = fd;
	n->buf = buf;
	n->at = (struct loc){ .m = m, .dir = buf, .file = m->file };
	return 0;
}
