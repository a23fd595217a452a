/* dry_path.c: the dry run's directories and path lookup.
 *
 * Each filesystem instance has a set of directories (fs-absolute paths);
 * a lookup walks the mount graph the way the kernel's path walk does:
 * into the topmost mount at each directory, out of a mount root on "..",
 * never above the caller's root.
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

/* Resolve path for a caller whose root is root.  With MKDIR, missing
 * directories are made (mkdir -p); with TOUCH, a missing last component
 * becomes a file.  out->dir points into *dirbuf, which the caller frees. */
int lookup(struct dry *d, struct loc root, const char *path, int make,
	   struct loc *out, char **dirbuf)
{
	size_t cap = strlen(root.dir) + strlen(path) + 4096;
	char *buf = malloc(cap), *copy = strdup(path), *save = NULL;
	struct loc p = root;
	int err = 0;

	if (!buf || !copy)
		abort();
	strcpy(buf, root.dir);
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
