/* handle.c: the broker's hold on the mounts of its graph: an O_PATH
 * descriptor on each one's root (broker.h), found by the graph's mount or
 * by the kernel's mount id, and the superblocks they are on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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
	devref(b, h, 1);
	return 0;
}

int handle_add(struct broker *b, struct mount *m, int fd)
{
	struct stat st;
	int kid = fd_mnt_id(fd);
	if (kid < 0)
		return kid;
	return fstat(fd, &st) < 0 ? -errno : handle_put(b, m, fd, kid, st.st_dev);
}

struct handle *handle_of(const struct broker *b, const struct mount *m)
{
	struct handle *h;
	HASH_FIND(hh, b->by_seq, &m->seq, sizeof m->seq, h);
	return h && h->fd >= 0 ? h : NULL;
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
	if (h->fd >= 0)
		close(h->fd);
	free(h);
}
