/* dry_path.c: the dry run's directories and path lookup.
 *
 * Each filesystem instance has a set of directories (fs-absolute paths);
 * a lookup walks the mount graph the way the kernel's path walk does:
 * into the topmost mount at each directory, out of a mount root on "..",
 * never above the caller's root.  A relative path starts at the script's
 * cwd ("cd DIR"), which stays on its own mount when others cover it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "dry.h"

static struct dirs *dirs_of(struct dry *d, const struct fs *fs, bool make)
{
	struct dirs *s;
	HASH_FIND(hh, d->dirs, &fs->id, sizeof fs->id, s);
	if (!s && make) {
		s = calloc(1, sizeof *s);
		if (!s)
			abort();
		s->fs = fs->id;
		HASH_ADD(hh, d->dirs, fs, sizeof s->fs, s);
	}
	return s;
}

int entry_kind(struct dry *d, const struct fs *fs, const char *path)
{
	struct dirs *s = dirs_of(d, fs, false);
	struct dent *e = NULL;
	if (strcmp(path, "/") == 0)
		return DIR_;
	if (s)
		HASH_FIND_STR(s->set, path, e);
	return !e ? NONE : e->file ? FILE_ : DIR_;
}

void entry_add(struct dry *d, const struct fs *fs, const char *path, bool file)
{
	if (entry_kind(d, fs, path) != NONE)
		return;
	struct dirs *s = dirs_of(d, fs, true);
	struct dent *e = calloc(1, sizeof *e);
	if (!e || !(e->path = strdup(path)))
		abort();
	e->file = file;
	HASH_ADD_KEYPTR(hh, s->set, e->path, strlen(e->path), e);
}

static bool same(struct loc a, struct loc b)
{
	return a.m == b.m && strcmp(a.dir, b.dir) == 0;
}

/* Into the topmost mount at (m, dir). */
static void down(struct dry *d, struct loc *p, char *buf)
{
	struct mount *c;
	while ((c = mount_at(&d->g, p->m, buf))) {
		p->m = c;
		p->file = c->file;
		strcpy(buf, c->root);
	}
	p->dir = buf;
}

/* "..": out of mount roots (not past the caller's root), up one level. */
static void up(struct dry *d, struct loc root, struct loc *p, char *buf)
{
	while (!same(*p, root) && strcmp(buf, p->m->root) == 0 && p->m->parent) {
		strcpy(buf, p->m->mp);
		p->m = p->m->parent;
	}
	if (same(*p, root) || strcmp(buf, "/") == 0)
		return;
	char *slash = strrchr(buf, '/');
	if (slash == buf)
		slash[1] = '\0';
	else
		*slash = '\0';
	down(d, p, buf);
}

/* The topmost mount on p's place (buf holds p->dir).  dry_lookup() lands on
 * the top of a stack at every name but ".", which stays where it is: a
 * cwd covered since it was entered keeps its dentry beneath.  The kernel
 * goes to the top for umount's last component (fs/namei.c
 * LOOKUP_MOUNTPOINT) and for where a new mount, bind, move or
 * pivot_root's put_old goes (fs/namespace.c do_lock_mount()); not for a
 * source, new_root, a remount or a change of type (semantics.md 3.2). */
void dry_top(struct dry *d, struct loc *p, char *buf)
{
	down(d, p, buf);
}

/* The live mount of creation number seq, or NULL (unmounted). */
struct mount *dry_mount_of(struct dry *d, uint64_t seq)
{
	for (struct list *l = d->g.order.next; l != &d->g.order; l = l->next) {
		struct mount *m = list_entry(l, struct mount, order);
		if (m->seq == seq)
			return m;
	}
	return NULL;
}

/* Where a relative path starts: the script's cwd ("cd DIR") when it has
 * one, the caller's root otherwise (native.sh runs commands from "/").
 * The cwd pins its mount, so it is gone only after a lazy umount: the
 * kernel then refuses every mount-family call on it (check_mnt()). */
static int start_of(struct dry *d, struct loc root, const char *path,
		    struct loc *p)
{
	*p = root;
	if (path[0] == '/' || !d->cwd.set)
		return 0;
	if (!(p->m = dry_mount_of(d, d->cwd.seq)))
		return -EINVAL;
	p->dir = d->cwd.dir;
	p->file = false;
	return 0;
}

/* cd DIR: the script's cwd, kept as (mount, directory): later mounts on
 * it cover it and leave it where it is, as the kernel keeps a cwd's
 * (vfsmount, dentry).  A DIR that cannot be entered gives fallback
 * instead (the sandbox, or a jail's root: native.sh's rule). */
int dry_cd(struct dry *d, struct loc root, const char *path,
	   const char *fallback)
{
	struct loc at;
	char *buf;
	int err = dry_lookup(d, root, path, LOOKUP, &at, &buf);
	if (!err && at.file) {
		free(buf);
		err = -ENOTDIR;
	}
	if (err && fallback)
		return dry_cd(d, root, fallback, NULL);
	if (err)
		return err;
	dry_use(at.m);             /* the last keeper's cwd went too */
	dry_use(d->cwd.set ? dry_mount_of(d, d->cwd.seq) : NULL);
	free(d->cwd.dir);
	d->cwd = (struct dry_cwd){ true, at.m->seq, buf };
	return 0;
}

/* Resolve path for a caller whose root is root.  With MKDIR, missing
 * directories are made (mkdir -p); with TOUCH, a missing last component
 * becomes a file.  out->dir points into *dirbuf, which the caller frees. */
int dry_lookup(struct dry *d, struct loc root, const char *path, int make,
	       struct loc *out, char **dirbuf)
{
	struct loc p;
	int err = start_of(d, root, path, &p);
	size_t cap = strlen(p.dir) + strlen(path) + 4096;
	char *buf = malloc(cap), *copy = strdup(path), *save = NULL;

	if (!buf || !copy)
		abort();
	strcpy(buf, p.dir);
	p.dir = buf;
	if (!*path)
		err = -ENOENT;
	for (char *c = strtok_r(copy, "/", &save); c && !err;
	     c = strtok_r(NULL, "/", &save)) {
		if (p.file) {          /* a file in the middle of the path */
			err = -ENOTDIR;
			break;
		}
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			up(d, root, &p, buf);
			continue;
		}
		if (strlen(buf) + strlen(c) + 2 > cap) {
			err = -ENAMETOOLONG;
			break;
		}
		if (strcmp(buf, "/") != 0)
			strcat(buf, "/");
		strcat(buf, c);
		int kind = entry_kind(d, p.m->fs, buf);
		if (kind == NONE) {
			bool last = save == NULL || *save == '\0';
			if (!make) {
				err = -ENOENT;
				break;
			}
			if ((p.m->flags & MNT_RDONLY) ||
			    (p.m->fs->flags & SB_RDONLY)) {
				err = -EROFS;
				break;
			}
			kind = make == TOUCH && last ? FILE_ : DIR_;
			entry_add(d, p.m->fs, buf, kind == FILE_);
		}
		p.file = kind == FILE_;
		down(d, &p, buf);
	}
	free(copy);
	if (err) {
		free(buf);
		return err;
	}
	*out = p;
	*dirbuf = buf;
	return 0;
}

/* A process used m (a lookup ended on it, a cwd or an open file there
 * went): the kernel's mntput() clears its MNT_EXPIRE mark; only umount2
 * itself puts its reference without (mntput_no_expire()). */
void dry_use(struct mount *m)
{
	if (m)
		m->expiry_mark = false;
}
