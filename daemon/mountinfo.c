/* mountinfo.c: /proc/<pid>/mountinfo and /proc/<pid>/mounts as a reader
 * whose root is any place sees them (semantics.md 1.5).
 */
#include <stdlib.h>
#include <string.h>
#include "journal.h"

/* 1.5.2: exactly space, tab, newline and backslash, as \ooo. */
static void put_escaped(FILE *out, const char *s)
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
 * as prepend_path() does; NULL when the walk never meets the root (1.5.3).
 * The result is malloc'ed. */
static char *path_from(const struct mount *m, const char *dir, struct loc root)
{
	char *path = strdup("");
	for (;;) {
		if (m == root.m && dir_under(dir, root.dir) &&
		    dir_under(root.dir, m->root)) {
			const char *rel = below(dir, root.dir);
			char *full;
			if (asprintf(&full, "%s%s", rel, path) < 0)
				abort();
			free(path);
			if (!*full) {
				free(full);
				full = strdup("/");
			}
			return full;
		}
		if (!m->parent || !dir_under(dir, m->root)) {
			free(path);
			return NULL;
		}
		char *next;
		if (asprintf(&next, "%s%s", below(dir, m->root), path) < 0)
			abort();
		free(path);
		path = next;
		dir = m->mp;
		m = m->parent;
	}
}

/* The mountpoint of m as a reader with that root sees it (field 5), or
 * NULL when it cannot see m; malloc'ed. */
char *mount_path(const struct mount *m, struct loc root)
{
	return path_from(m, m->root, root);
}

/* Whether the walk up from (m, dir) meets root: is_path_reachable(). */
bool reaches(const struct mount *m, const char *dir, struct loc root)
{
	char *p = path_from(m, dir, root);
	free(p);
	return p != NULL;
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

static void put_mount_flags(FILE *out, unsigned f)
{
	static const struct { unsigned bit; const char *name; } names[] = {
		{ MNT_NOSUID, ",nosuid" }, { MNT_NODEV, ",nodev" },
		{ MNT_NOEXEC, ",noexec" }, { MNT_NOATIME, ",noatime" },
		{ MNT_NODIRATIME, ",nodiratime" }, { MNT_RELATIME, ",relatime" },
		{ MNT_NOSYMFOLLOW, ",nosymfollow" },
	};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (f & names[i].bit)
			fputs(names[i].name, out);
}

/* "ro"/"rw", then the superblock flags that are set. */
static void put_sb_flags(FILE *out, unsigned f)
{
	fputs(f & SB_RDONLY ? " ro" : " rw", out);
	if (f & SB_SYNC)
		fputs(",sync", out);
	if (f & SB_DIRSYNC)
		fputs(",dirsync", out);
	if (f & SB_MAND)
		fputs(",mand", out);
	if (f & SB_LAZYTIME)
		fputs(",lazytime", out);
}

static void put_optional(FILE *out, const struct mount *m, struct ns *ns,
			 struct loc root)
{
	if (m->group)
		fprintf(out, " shared:%u", m->group);
	if (m->master) {
		unsigned master = m->master->group, dom = dominating(m, ns, root);
		fprintf(out, " master:%u", master);
		if (dom && dom != master)
			fprintf(out, " propagate_from:%u", dom);
	}
	if (m->unbindable)
		fputs(" unbindable", out);
}

static void put_line(FILE *out, const struct mount *m, const char *path,
		     struct ns *ns, struct loc root)
{
	fprintf(out, "%u %u 0:%u ", m->id, m->parent ? m->parent->id : m->id,
		m->fs->dev);
	put_escaped(out, m->root);
	fputc(' ', out);
	put_escaped(out, path);
	fputs(m->flags & MNT_RDONLY ? " ro" : " rw", out);
	put_mount_flags(out, m->flags);
	put_optional(out, m, ns, root);
	fputs(" - ", out);
	put_escaped(out, m->fs->type);
	fputc(' ', out);
	put_escaped(out, *m->devname ? m->devname : "none");
	put_sb_flags(out, m->fs->flags);
	if (*m->fs->opts)
		fprintf(out, ",%s", m->fs->opts);
	fputc('\n', out);
}

/* Lines in creation order (1.5.4), only the mounts the reader can reach. */
void render_mountinfo(const struct graph *g, struct ns *ns, struct loc root,
		      FILE *out)
{
	for (struct list *l = g->order.next; l != &g->order; l = l->next) {
		struct mount *m = list_entry(l, struct mount, order);
		char *path = m->ns == ns ? path_from(m, m->root, root) : NULL;
		if (path)
			put_line(out, m, path, ns, root);
		free(path);
	}
}

/* /proc/<pid>/mounts: "source mountpoint fstype opts 0 0", the leading
 * rw/ro being the effective state (1.5.2). */
void render_mounts(const struct graph *g, struct ns *ns, struct loc root,
		   FILE *out)
{
	for (struct list *l = g->order.next; l != &g->order; l = l->next) {
		struct mount *m = list_entry(l, struct mount, order);
		char *path = m->ns == ns ? path_from(m, m->root, root) : NULL;
		if (!path)
			continue;
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
		free(path);
	}
}

/* findmnt's PROPAGATION column (libmount's words, semantics.md 1.2). */
static const char *propagation(const struct mount *m)
{
	if (m->unbindable)
		return "private,unbindable";
	if (m->group)
		return m->master ? "shared,slave" : "shared";
	return m->master ? "private,slave" : "private";
}

static unsigned depth(const struct mount *m, struct loc root)
{
	unsigned n = 0;
	for (m = m->parent; m; m = m->parent)
		if (reachable(m, root))
			n++;
	return n;
}

/* The tree as findmnt -o TARGET,SOURCE,FSROOT,PROPAGATION,OPT-FIELDS. */
void render_tree(struct ns *ns, struct loc root, FILE *out)
{
	fprintf(out, "%-28s %-8s %-8s %-20s %s\n", "TARGET", "SOURCE", "FSROOT",
		"PROPAGATION", "OPT-FIELDS");
	for (struct mount *m = ns->root; m; m = next_in_tree(m, ns->root)) {
		char *path = path_from(m, m->root, root);
		if (!path)
			continue;
		char *target;
		if (asprintf(&target, "%*s%s", 2 * depth(m, root), "", path) < 0)
			abort();
		fprintf(out, "%-28s %-8s %-8s %-20s", target, m->devname, m->root,
			propagation(m));
		put_optional(out, m, ns, root);
		fputc('\n', out);
		free(target);
		free(path);
	}
}
