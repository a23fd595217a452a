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

/* One mount option: the flag it sets, or clears with clear. */
static const struct opt {
	const char *name;
	unsigned long flag;
	bool clear;
} opts[] = {
	{ "ro", LS_MS_RDONLY, 0 }, { "rw", LS_MS_RDONLY, 1 },
	{ "nosuid", LS_MS_NOSUID, 0 }, { "suid", LS_MS_NOSUID, 1 },
	{ "nodev", LS_MS_NODEV, 0 }, { "dev", LS_MS_NODEV, 1 },
	{ "noexec", LS_MS_NOEXEC, 0 }, { "exec", LS_MS_NOEXEC, 1 },
	{ "noatime", LS_MS_NOATIME, 0 }, { "atime", LS_MS_NOATIME, 1 },
	{ "nodiratime", LS_MS_NODIRATIME, 0 },
	{ "diratime", LS_MS_NODIRATIME, 1 },
	{ "relatime", LS_MS_RELATIME, 0 }, { "norelatime", LS_MS_RELATIME, 1 },
	{ "strictatime", LS_MS_STRICTATIME, 0 },
	{ "nostrictatime", LS_MS_STRICTATIME, 1 },
	{ "nosymfollow", LS_MS_NOSYMFOLLOW, 0 },
	{ "symfollow", LS_MS_NOSYMFOLLOW, 1 },
	{ "sync", LS_MS_SYNCHRONOUS, 0 }, { "async", LS_MS_SYNCHRONOUS, 1 },
	{ "dirsync", LS_MS_DIRSYNC, 0 },
	{ "lazytime", LS_MS_LAZYTIME, 0 }, { "nolazytime", LS_MS_LAZYTIME, 1 },
	{ "mand", LS_MS_MANDLOCK, 0 }, { "nomand", LS_MS_MANDLOCK, 1 },
	{ "bind", LS_MS_BIND, 0 }, { "remount", LS_MS_REMOUNT, 0 },
};

/* OPTS applied on top of ms, left to right; unknown ones are the
 * filesystem's and pass as data, which the model keeps no record of. */
static unsigned long apply(unsigned long ms, const char *list)
{
	char *copy = strdup(list ? list : ""), *save = NULL;
	if (!copy)
		abort();
	for (char *o = strtok_r(copy, ",", &save); o;
	     o = strtok_r(NULL, ",", &save))
		for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
			if (strcmp(o, opts[i].name) == 0)
				ms = opts[i].clear ? ms & ~opts[i].flag
						   : ms | opts[i].flag;
	free(copy);
	return ms;
}

/* The last mount in mountinfo order that the caller sees at path. */
static const struct mount *last_at(struct cmd *k, const char *path)
{
	struct graph *g = &k->d->g;
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	for (struct list *l = g->order.prev; l != &g->order; l = l->prev) {
		struct mount *m = list_entry(l, struct mount, order);
		char *p = m->ns == k->c.ns ? mount_path(m, k->c.root) : NULL;
		bool hit = p && strlen(p) == n && strncmp(p, path, n) == 0;
		free(p);
		if (hit)
			return m;
	}
	return NULL;
}

/* The options mountinfo shows for the mount at path, read back as mount(2)
 * flags: what util-linux starts a remount from.  Like util-linux it takes
 * the last line whose mountpoint is path, which is not always the top of
 * the stack there (a stack grown by tucking); no line: no options. */
static unsigned long current(struct cmd *k, const char *path)
{
	static const struct { unsigned mnt; unsigned long ms; } mnt[] = {
		{ MNT_RDONLY, LS_MS_RDONLY }, { MNT_NOSUID, LS_MS_NOSUID },
		{ MNT_NODEV, LS_MS_NODEV }, { MNT_NOEXEC, LS_MS_NOEXEC },
		{ MNT_NOATIME, LS_MS_NOATIME },
		{ MNT_NODIRATIME, LS_MS_NODIRATIME },
		{ MNT_RELATIME, LS_MS_RELATIME },
		{ MNT_NOSYMFOLLOW, LS_MS_NOSYMFOLLOW },
	}, sb[] = {
		{ SB_RDONLY, LS_MS_RDONLY }, { SB_SYNC, LS_MS_SYNCHRONOUS },
		{ SB_DIRSYNC, LS_MS_DIRSYNC }, { SB_MAND, LS_MS_MANDLOCK },
		{ SB_LAZYTIME, LS_MS_LAZYTIME },
	};
	const struct mount *m = last_at(k, path);
	unsigned long ms = 0;
	if (!m)
		return 0;
	for (size_t i = 0; i < sizeof mnt / sizeof *mnt; i++)
		if (m->flags & mnt[i].mnt)
			ms |= mnt[i].ms;
	for (size_t i = 0; i < sizeof sb / sizeof *sb; i++)
		if (m->fs->flags & sb[i].mnt)
			ms |= sb[i].ms;
	return ms;
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
 * network namespace (S30); other types a new one each time. */
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
	err = op_mount_fs(&k->d->g, &k->c, l, instance(k->d, a->type),
			  a->pos[0], apply(0, a->opts));
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
	unsigned long ms = LS_MS_REMOUNT;
	if (!a->mode)                  /* -o remount: merged with what is */
		ms |= apply(current(k, a->pos[a->npos - 1]), a->opts);
	else                           /* after a bind: the options alone */
		ms |= LS_MS_BIND | apply(0, a->opts);
	err = op_remount(&k->d->g, &k->c, l, ms & ~(unsigned long)LS_MS_REC);
	free(buf);
	return err;
}

int dry_mount(struct cmd *k)
{
	struct args a;
	if (!parse(k, &a))
		return -EINVAL;
	if (!a.mode && (apply(0, a.opts) & LS_MS_REMOUNT) && a.npos == 1)
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
