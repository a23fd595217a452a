/* mountinfo.c: /proc/<pid>/mountinfo and /proc/<pid>/mounts as a reader
 * whose root is any place sees them (semantics.md 1.5).
 */
#include <stdint.h>
#include <string.h>
#include "journal.h"

/* 1.5.2: exactly space, tab, newline and backslash, as \ooo. */
void put_escaped(FILE *out, const char *s)
{
	for (; *s; s++)
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\\')
			fprintf(out, "\\%03o", (unsigned char)*s);
		else
			fputc(*s, out);
}

/* dir relative to top ("" when equal); top contains dir. */
static const char *below(const char *dir, const char *top)
{
	if (strcmp(top, "/") == 0)
		return dir[1] ? dir : "";
	return dir + strlen(top);
}

/* The path from the reader's root to (m, dir), walking up through parents
 * as prepend_path() does: each mount on the way adds its directory below
 * its root, the last one the directory below the reader's root.  Returns
 * the path's length, SIZE_MAX when the walk never meets the root (1.5.3);
 * with end, writes the pieces backwards from there. */
static size_t path_walk(const struct mount *m, const char *dir,
			struct loc root, char *end)
{
	size_t len = 0;
	for (;;) {
		bool top = m == root.m && dir_under(dir, root.dir) &&
			   dir_under(root.dir, m->root);
		if (!top && (!m->parent || !dir_under(dir, m->root)))
			return SIZE_MAX;
		const char *rel = below(dir, top ? root.dir : m->root);
		size_t n = strlen(rel);
		len += n;
		if (end)
			memcpy(end -= n, rel, n);
		if (top)
			return len;
		dir = m->mp;
		m = m->parent;
	}
}

/* The mountpoint of m as a reader with that root sees it (field 5), or
 * NULL when it cannot see m, or is out of memory (*err -ENOMEM then). */
char *mount_path(const struct mount *m, struct loc root, int *err)
{
	size_t len = path_walk(m, m->root, root, NULL);
	char *path = len == SIZE_MAX ? NULL : eng_malloc(len ? len + 1 : 2);
	if (err)
		*err = len != SIZE_MAX && !path ? -ENOMEM : 0;
	if (!path)
		return NULL;
	if (len)
		path_walk(m, m->root, root, path + len);
	else
		path[len++] = '/';
	path[len] = '\0';
	return path;
}

static bool reachable(const struct mount *m, struct loc root)
{
	return reaches(m, m->root, root);
}

/* 1.5.5: the first group up the master chain with a member in the reader's
 * namespace whose root the reader can see. */
static unsigned dominating(const struct mount *m, struct ns *ns, struct loc root)
{
	for (const struct mount *s = m->master; s; s = s->master) {
		const struct mount *p = s;
		do {
			if (p->ns == ns && reachable(p, root))
				return p->group;
			p = next_peer(p);
		} while (p != s);
	}
	return 0;
}

/* The flags of t set in f but read-only (written apart), each ",name". */
static void put_flags(FILE *out, const struct flag_table *t, unsigned f)
{
	for (size_t i = 0; i < t->n; i++)
		if ((f & t->v[i].bit) && t->v[i].ms != LS_MS_RDONLY)
			fprintf(out, ",%s", t->v[i].name);
}

static void put_mount_flags(FILE *out, unsigned f)
{
	put_flags(out, &mnt_flag_table, f);
}

/* "ro"/"rw", then the superblock flags that are set. */
static void put_sb_flags(FILE *out, unsigned f)
{
	fputs(f & SB_RDONLY ? " ro" : " rw", out);
	put_flags(out, &sb_flag_table, f);
}

/* The optional fields (1.5.5), each with its leading blank. */
void optional_fields(char buf[OPTIONAL_MAX], const struct mount *m,
		     struct ns *ns, struct loc root)
{
	int n = 0;
	buf[0] = '\0';
	if (m->group)
		n += snprintf(buf + n, OPTIONAL_MAX - n, " shared:%u", m->group);
	if (m->master) {
		unsigned master = m->master->group, dom = dominating(m, ns, root);
		n += snprintf(buf + n, OPTIONAL_MAX - n, " master:%u", master);
		if (dom && dom != master)
			n += snprintf(buf + n, OPTIONAL_MAX - n,
				      " propagate_from:%u", dom);
	}
	if (m->unbindable)
		snprintf(buf + n, OPTIONAL_MAX - n, " unbindable");
}

static void put_line(FILE *out, const struct mount *m, const char *path,
		     struct ns *ns, struct loc root)
{
	fprintf(out, "%u %u %u:%u ", m->id, m->parent ? m->parent->id : m->id,
		m->fs->major, m->fs->dev);
	put_escaped(out, m->root);
	fputc(' ', out);
	put_escaped(out, path);
	fputs(m->flags & MNT_RDONLY ? " ro" : " rw", out);
	char opt[OPTIONAL_MAX];
	put_mount_flags(out, m->flags);
	optional_fields(opt, m, ns, root);
	fputs(opt, out);
	fputs(" - ", out);
	put_escaped(out, m->fs->type);
	fputc(' ', out);
	put_escaped(out, *m->devname ? m->devname : "none");
	put_sb_flags(out, m->fs->flags);
	if (*m->fs->opts)
		fprintf(out, ",%s", m->fs->opts);
	fputc('\n', out);
}

/* A /proc/<pid>/mounts line: "source mountpoint fstype opts 0 0", the
 * leading rw/ro being the effective state (1.5.2). */
static void put_mounts_line(FILE *out, const struct mount *m,
			    const char *path, struct ns *ns, struct loc root)
{
	(void)ns, (void)root;
	put_escaped(out, *m->devname ? m->devname : "none");
	fputc(' ', out);
	put_escaped(out, path);
	fputc(' ', out);
	put_escaped(out, m->fs->type);
	/* the effective state, then superblock, mount, fs options */
	unsigned sb = m->fs->flags;
	if (m->flags & MNT_RDONLY)
		sb |= SB_RDONLY;
	put_sb_flags(out, sb);
	put_mount_flags(out, m->flags);
	if (*m->fs->opts)
		fprintf(out, ",%s", m->fs->opts);
	fputs(" 0 0\n", out);
}

/* A line per mount the reader can reach, in creation order (1.5.4). */
static int render_lines(const struct graph *g, struct ns *ns,
			struct loc root, FILE *out,
			void (*put)(FILE *, const struct mount *, const char *,
				    struct ns *, struct loc))
{
	int err = 0;
	for (struct list *l = g->order.next; !err && l != &g->order;
	     l = l->next) {
		struct mount *m = list_entry(l, struct mount, order);
		char *path = m->ns == ns ? mount_path(m, root, &err) : NULL;
		if (path)
			put(out, m, path, ns, root);
		free(path);
	}
	return err;
}

/* /proc/<pid>/mountinfo. */
int render_mountinfo(const struct graph *g, struct ns *ns, struct loc root,
		     FILE *out)
{
	return render_lines(g, ns, root, out, put_line);
}

/* /proc/<pid>/mounts. */
int render_mounts(const struct graph *g, struct ns *ns, struct loc root,
		  FILE *out)
{
	return render_lines(g, ns, root, out, put_mounts_line);
}

/* findmnt's SOURCE: the device, and a bind mount's directory of it as
 * "dev[/dir]".  Malloc'ed; NULL: out of memory. */
char *mount_source(const struct mount *m)
{
	const char *dev = *m->devname ? m->devname : "none";
	if (strcmp(m->root, "/") == 0)
		return eng_strdup(dev);
	return eng_asprintf("%s[%s]", dev, m->root);
}

