/* handle.c: the broker's hold on the mounts of its graph: an O_PATH
 * descriptor on each one's root (broker.h), found by the graph's mount or
 * by the kernel's mount id, and the superblocks they are on.  Where the
 * kernel has a mount now (kernel_path()) is read through them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker.h"
#include "base/base.h"
#include "base/mtparse.h"
#include "hold/hold.h"
#include "hold/holder.h"

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

/* The handles by address of their mounts (mount_at_ptr()): a table of
 * its own rather than a uthash, whose chains a failed lookup walks whole,
 * and most lookups fail (stdelta.c asks for each field of each place). */
static size_t ptr_home(const struct ptrtab *t, const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
	return (size_t)(x >> 32) & (t->cap - 1);
}

static void ptr_place(struct ptrtab *t, struct handle *h)
{
	size_t i = ptr_home(t, h->m);
	while (t->v[i])
		i = (i + 1) & (t->cap - 1);
	t->v[i] = h;
	t->n++;
}

static int ptr_add(struct ptrtab *t, struct handle *h)
{
	if ((t->n + 1) * 2 > t->cap) {
		struct ptrtab new = { .cap = t->cap ? t->cap * 2 : 1024 };
		if (!(new.v = calloc(new.cap, sizeof *new.v)))
			return -ENOMEM;
		for (size_t i = 0; i < t->cap; i++)
			if (t->v[i])
				ptr_place(&new, t->v[i]);
		free(t->v);
		*t = new;
	}
	ptr_place(t, h);
	return 0;
}

/* The slot of the handle on p (of h itself, when given). */
static size_t ptr_find(const struct ptrtab *t, const void *p,
		       const struct handle *h)
{
	if (!t->cap)
		return SIZE_MAX;
	for (size_t i = ptr_home(t, p); t->v[i]; i = (i + 1) & (t->cap - 1))
		if (h ? t->v[i] == h : t->v[i]->m == p)
			return i;
	return SIZE_MAX;
}

/* Removes slot i, moving back the entries after it that may not stay
 * behind the hole (backward-shift deletion: no tombstones). */
static void ptr_del(struct ptrtab *t, size_t i)
{
	size_t mask = t->cap - 1;
	for (size_t j = (i + 1) & mask; t->v[j]; j = (j + 1) & mask) {
		size_t k = ptr_home(t, t->v[j]->m);
		if (((j - k) & mask) >= ((j - i) & mask)) {
			t->v[i] = t->v[j];
			i = j;
		}
	}
	t->v[i] = NULL;
	t->n--;
}

/* The kernel's creation order: the executor makes its mounts in the
 * order of its steps, which is not always the engine's (seq), and a
 * restarted broker attaches children in the kernel's order. */
static uint64_t made_next;

/* A handle on m; fd -1 for a mount the kernel has but the broker cannot
 * reach (covered when it was imported): known by its id, never used. */
int handle_put(struct broker *b, struct mount *m, int fd, int kid,
		      dev_t dev)
{
	struct handle *h = calloc(1, sizeof *h);
	if (!h)
		return -ENOMEM;
	h->seq = m->seq;
	h->made = ++made_next;
	h->fd = fd;
	h->kid = kid;
	h->dev = dev;
	h->m = m;
	h->place = -1;
	if (ptr_add(&b->by_ptr, h)) {
		free(h);
		return -ENOMEM;
	}
	HASH_ADD(hh, b->by_seq, seq, sizeof h->seq, h);
	HASH_ADD(hk, b->by_kid, kid, sizeof h->kid, h);
	devref(b, h, 1);
	/* -fanalyzer's leak: h is in the tables (uthash's macros) */
	holder_note(fd, kid);
	return 0;
}

/* A handle on m from fd, whose mount id and type the caller knows. */
int handle_set(struct broker *b, struct mount *m, int fd, int kid,
	       const struct stat *st)
{
	/* what the table does not say: a file's mount (imported, or taken
	 * from the holder) may take only a file's place (semantics 3.1) */
	m->file = !S_ISDIR(st->st_mode);
	return handle_put(b, m, fd, kid, st->st_dev);
}

/* A handle on m from fd, on mount kid (-errno: not known). */
int handle_take(struct broker *b, struct mount *m, int fd, int kid)
{
	struct stat st;
	if (kid < 0)
		return kid;
	if (fd_stat(fd, &st) < 0)
		return -errno;
	return handle_set(b, m, fd, kid, &st);
}

/* The same, its mount read in the call that reads its status. */
int handle_add(struct broker *b, struct mount *m, int fd)
{
	struct stat st;
	int kid, root;
	if (fd_stat_kid(fd, &st, &kid, &root) < 0)
		return -errno;
	if (kid < 0)           /* before 5.8 */
		kid = fd_mnt_id(fd);
	return kid < 0 ? kid : handle_set(b, m, fd, kid, &st);
}

/* The graph renumbered its mounts in the kernel's table order
 * (graph_reorder(), at import): by_seq follows, and so does the
 * creation order. */
void handle_rekey(struct broker *b)
{
	struct handle *all = b->by_seq, *h, *next;
	b->by_seq = NULL;
	for (h = all; h; h = next) {
		next = h->hh.next;
		HASH_DELETE(hh, all, h);
		h->seq = h->made = h->m->seq;
		made_next = made_next > h->made ? made_next : h->made;
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
	size_t i = ptr_find(&b->by_ptr, p, NULL);
	struct handle *h = i == SIZE_MAX ? NULL : b->by_ptr.v[i];
	return h && h->fd >= 0 ? h->m : NULL;
}

struct mount *mount_of_kid(const struct broker *b, int kid)
{
	struct handle *h;
	HASH_FIND(hk, b->by_kid, &kid, sizeof kid, h);
	return h ? h->m : NULL;
}

/* The descriptor held on mount kid, or -1: mntid.c's way to tell
 * mounts apart (mntid_known()). */
int handle_fd_of_kid(const void *b, int kid)
{
	struct mount *m = mount_of_kid(b, kid);
	struct handle *h = m ? handle_of(b, m) : NULL;
	return h ? h->fd : -1;
}

void handle_drop(struct broker *b, struct handle *h)
{
	devref(b, h, -1);
	HASH_DELETE(hh, b->by_seq, h);
	HASH_DELETE(hk, b->by_kid, h);
	size_t i = ptr_find(&b->by_ptr, h->m, h);
	if (i != SIZE_MAX)
		ptr_del(&b->by_ptr, i);
	if (h->fd >= 0) {
		holder_note(h->fd, -1);
		close(h->fd);
	}
	expiry_forget(h);
	free(h);
}

void expiry_forget(struct handle *h)
{
	if (h->place >= 0)
		close(h->place);
	free(h->name);
	h->place = -1;
	h->name = NULL;
}

/* Where the graph has m, as the broker's kernel table names it: a
 * namespace copy's mounts lie under the place of its root (STATE/ns/ID,
 * ns.c), which no path from the broker's own root reaches in the graph. */
char *kernel_path(const struct broker *b, const struct mount *m)
{
	struct ns *ns = m->ns ? m->ns : b->ns;
	struct handle *h = handle_of(b, ns->root);
	char *in = mount_path(m, mount_root(ns->root), NULL), *top, *p = NULL;
	if (!in || ns == b->ns)
		return in;
	top = h ? fd_path(h->fd) : NULL;
	if (top && asprintf(&p, "%s%s", top, strcmp(in, "/") ? in : "") < 0)
		p = NULL;
	free(top);
	free(in);
	return p;
}
