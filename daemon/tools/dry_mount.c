/* dry_mount.c: util-linux mount(8) as the mount(2) calls it makes
 * (semantics.md 2.4, S41, and what strace shows of util-linux 2.38):
 *
 *   mount -t TYPE [-o OPTS] NAME DIR     one call, OPTS as flags
 *   mount --bind|--rbind [-o OPTS] A B   the bind, then with OPTS a
 *                                        MS_REMOUNT|MS_BIND of B
 *   mount --move A B                     MS_MOVE
 *   mount --make-[r]TYPE DIR             one propagation change
 *   mount -o remount[,bind][,OPTS] DIR   MS_REMOUNT of the options DIR has
 *                                        (mount and superblock), OPTS
 *                                        applied on top
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "dry.h"

struct args {
	const char *type, *opts, *mode;
	const char *pos[2];
	int npos, first;       /* index of pos[0] in the command's words */
};

/* The last mount in mountinfo order that the caller sees at path, in
 * *last (NULL: none). */
static int last_at(struct cmd *k, const char *path, const struct mount **last)
{
	struct graph *g = &k->d->g;
	size_t n = strlen(path);
	int err = 0;
	while (n > 1 && path[n - 1] == '/')
		n--;
	*last = NULL;
	for (struct list *l = g->order.prev; !err && l != &g->order;
	     l = l->prev) {
		struct mount *m = list_entry(l, struct mount, order);
		char *p = m->ns == k->c.ns ? mount_path(m, k->c.root, &err) : NULL;
		bool hit = p && strlen(p) == n && strncmp(p, path, n) == 0;
		free(p);
		if (hit) {
			*last = m;
			break;
		}
	}
	return err;
}

/* The options mountinfo shows for the mount at path, read back as mount(2)
 * flags: what util-linux starts a remount from.  Like util-linux it takes
 * the last line whose mountpoint is path, which is not always the top of
 * the stack there (a stack grown by tucking); no line: no options. */
static int current(struct cmd *k, const char *path, unsigned long *out)
{
	const struct mount *m;
	int err = last_at(k, path, &m);
	*out = 0;
	if (!err && m)
		*out = flags_ms(&mnt_flag_table, m->flags) |
		       flags_ms(&sb_flag_table, m->fs->flags);
	return err;
}

static bool parse(struct cmd *k, struct args *a)
{
	memset(a, 0, sizeof *a);
	for (int i = 1; i < k->n; i++) {
		const char *w = k->w[i];
		if ((strcmp(w, "-t") == 0 || strcmp(w, "-o") == 0) && i + 1 < k->n)
			*(w[1] == 't' ? &a->type : &a->opts) = k->w[++i];
		else if (strcmp(w, "-c") == 0)
			;          /* --no-canonicalize: paths go as given */
		else if (strncmp(w, "--", 2) == 0 && !a->mode)
			a->mode = w;
		else if (w[0] != '-' && a->npos < 2) {
			if (!a->npos)
				a->first = i;
			a->pos[a->npos++] = w;
		} else
			return false;
	}
	return true;
}

/* The filesystem a new mount of type gets: sysfs has one superblock per
 * network namespace (S30); other types a new one each time.  NULL: out of
 * memory. */
static struct fs *instance(struct dry *d, const char *type)
{
	if (strcmp(type, "sysfs") != 0)
		return fs_new(&d->g, type, NULL);
	for (struct list *l = d->g.order.next; l != &d->g.order; l = l->next) {
		struct mount *m = list_entry(l, struct mount, order);
		if (strcmp(m->fs->type, "sysfs") == 0)
			return m->fs;
	}
	return fs_new(&d->g, type, NULL);
}

/* The syscalls of one mount(8) command; arg is the struct args. */
static int new_op(struct cmd *k, const void *arg)
{
	const struct args *a = arg;
	struct loc l;
	char *buf;
	int err = dry_at(k, a->first + 1, &l, &buf);
	if (err)
		return err;
	dry_top(k->d, &l, buf);
	dry_use(l.m);              /* do_lock_mount() puts the top: mntput() */
	struct fs *fs = instance(k->d, a->type);
	err = fs ? op_mount_fs(&k->d->g, &k->c, l, fs, a->pos[0],
			       mount_options(0, a->opts)) : -ENOMEM;
	free(buf);
	return err;
}

static int two_op(struct cmd *k, const void *arg)
{
	const struct args *a = arg;
	struct loc from, to;
	char *b1, *b2;
	int err = dry_at(k, a->first, &from, &b1);
	if (err)
		return err;
	err = dry_at(k, a->first + 1, &to, &b2);
	if (!err) {
		dry_top(k->d, &to, b2);
		dry_use(to.m);
		if (strcmp(a->mode, "--move") == 0)
			err = op_move(&k->d->g, &k->c, from, to);
		else
			err = op_bind(&k->d->g, &k->c, from, to,
				      strcmp(a->mode, "--rbind") == 0);
		free(b2);
	}
	free(b1);
	return err;
}

static int change_op(struct cmd *k, const void *arg)
{
	const struct args *a = arg;
	static const struct { const char *name; int flags; } t[] = {
		{ "shared", LS_MS_SHARED }, { "slave", LS_MS_SLAVE },
		{ "private", LS_MS_PRIVATE }, { "unbindable", LS_MS_UNBINDABLE },
	};
	bool rec = strncmp(a->mode, "--make-r", 8) == 0;
	const char *type = a->mode + (rec ? 8 : 7);
	int flags = 0;
	for (size_t i = 0; i < sizeof t / sizeof *t; i++)
		if (strcmp(type, t[i].name) == 0)
			flags = t[i].flags | (rec ? LS_MS_REC : 0);
	struct loc l;
	char *buf;
	int err = dry_at(k, a->first, &l, &buf);
	if (!err) {
		err = op_change(&k->d->g, &k->c, l, flags);
		free(buf);
	}
	return err;
}

/* MS_REMOUNT of the last positional argument: for "-o remount" starting
 * from the options it has now, after a bind from the given ones alone. */
static int remount_op(struct cmd *k, const void *arg)
{
	const struct args *a = arg;
	struct loc l;
	char *buf;
	int err = dry_at(k, a->first + a->npos - 1, &l, &buf);
	if (err)
		return err;
	unsigned long ms = 0;
	if (!a->mode)                  /* -o remount: merged with what is */
		err = current(k, a->pos[a->npos - 1], &ms);
	else                           /* after a bind: the options alone */
		ms = LS_MS_BIND;
	ms = LS_MS_REMOUNT | mount_options(ms, a->opts);
	if (!err)
		err = op_remount(&k->d->g, &k->c, l,
				 ms & ~(unsigned long)LS_MS_REC);
	free(buf);
	return err;
}

int dry_mount(struct cmd *k)
{
	struct args a;
	if (!parse(k, &a))
		return -EINVAL;
	if (!a.mode && (mount_options(0, a.opts) & LS_MS_REMOUNT) && a.npos == 1)
		return dry_call(k, remount_op, &a);
	if (!a.mode && a.type && a.npos == 2)
		return dry_call(k, new_op, &a);
	if (!a.mode || a.npos != (strncmp(a.mode, "--make-", 7) ? 2 : 1))
		return -EINVAL;
	if (strncmp(a.mode, "--make-", 7) == 0)
		return dry_call(k, change_op, &a);
	int err = dry_call(k, two_op, &a);
	if (!err && a.opts && strcmp(a.mode, "--move") != 0)
		err = dry_call(k, remount_op, &a);
	return err;
}
