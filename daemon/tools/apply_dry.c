/* apply_dry.c: apply --dry-run.  The broker's table (or, with no broker,
 * the kernel's, where nothing propagates) becomes an engine graph; each
 * call of the apply goes to the engine instead of the broker, and the
 * plan's new mounts other than the line's own are where it propagates.
 * Nothing is mounted; the broker is only read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "engine.h"
#include "jailtab.h"

struct dry_apply {
	struct graph g;
	struct ns *ns;
	const char *addr;      /* the broker read at the start */
	FILE *out;             /* what the last call reaches, for note() */
	char *text;
	size_t len;
};

/* The directory of p's filesystem that the host path lies at. */
static char *inside(const struct mline *p, const char *path)
{
	const char *rest = path + (strcmp(p->mp, "/") ? strlen(p->mp) : 0);
	char *dir;
	if (asprintf(&dir, "%s%s", strcmp(p->root, "/") || !*rest ? p->root
		     : "", rest) < 0)
		return NULL;
	return dir;
}

static unsigned flags_of(const char *opts)
{
	static const struct { const char *w; unsigned f; } map[] = {
		{ "ro", MNT_RDONLY }, { "nosuid", MNT_NOSUID },
		{ "nodev", MNT_NODEV }, { "noexec", MNT_NOEXEC },
		{ "noatime", MNT_NOATIME }, { "nodiratime", MNT_NODIRATIME },
		{ "relatime", MNT_RELATIME },
		{ "nosymfollow", MNT_NOSYMFOLLOW },
	};
	char *copy = strdup(opts), *save = NULL;
	unsigned f = 0;
	for (char *w = copy ? strtok_r(copy, ",", &save) : NULL; w;
	     w = strtok_r(NULL, ",", &save))
		for (size_t i = 0; i < sizeof map / sizeof *map; i++)
			if (strcmp(w, map[i].w) == 0)
				f |= map[i].f;
	free(copy);
	return f;
}

/* The filesystem of line i: shared with an earlier line of its device. */
static struct fs *fs_of(struct dry_apply *d, const struct mtab *t,
			struct mount **m, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (m[j] && strcmp(t->v[j].dev, t->v[i].dev) == 0)
			return m[j]->fs;
	struct fs *fs = fs_new(&d->g, t->v[i].type, "");
	sscanf(t->v[i].dev, "%u:%u", &fs->major, &fs->dev);
	return fs;
}

static size_t line_of(const struct mtab *t, unsigned id)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].id == id)
			return i;
	return t->n;
}

/* Every line whose parent is in the graph, until none is left.  The root
 * is the line whose parent is out of sight, or itself (the broker's
 * table says "1 1" for the namespace's root, as the kernel's can). */
static void build(struct dry_apply *d, const struct mtab *t, struct mount **m)
{
	for (bool progress = true; progress; ) {
		progress = false;
		for (size_t i = 0; i < t->n; i++) {
			size_t p = line_of(t, t->v[i].parent);
			char *dir = NULL;
			if (p == i)
				p = t->n;
			if (m[i] || (p < t->n && !m[p]) ||
			    (p == t->n && d->ns->root))
				continue;
			if (p < t->n && !(dir = inside(&t->v[p], t->v[i].mp)))
				continue;
			m[i] = graph_import(&d->g, d->ns,
					    p < t->n ? m[p] : NULL, dir,
					    fs_of(d, t, m, i), t->v[i].root,
					    t->v[i].source,
					    flags_of(t->v[i].opts));
			free(dir);
			progress = m[i] != NULL;
		}
	}
}

/* Peer groups, masters and unbindable flags, as the table says them. */
static void restore(struct dry_apply *d, const struct mtab *t,
		    struct mount **m)
{
	plan_begin(&d->g);
	for (size_t i = 0; i < t->n; i++) {
		struct mount *peer = NULL, *master = NULL;
		for (size_t j = 0; j < t->n && m[i]; j++) {
			if (j < i && m[j] && t->v[i].group &&
			    t->v[j].group == t->v[i].group)
				peer = m[j];
			if (m[j] && t->v[i].master &&
			    t->v[j].group == t->v[i].master)
				master = m[j];
		}
		if (m[i])
			mount_restore(&d->g, m[i], t->v[i].group != 0, peer,
				      master, t->v[i].unbindable);
	}
	plan_commit(&d->g);
}

/* The place a host path names, walking the graph from the root down into
 * the topmost mount at each directory, as the kernel's walk does. */
static int place_of(struct dry_apply *d, const char *path, struct loc *l,
		    char **buf)
{
	struct stat st;
	struct mount *c;
	size_t cap = strlen(path) + 4096;
	char *dir = malloc(cap), *copy = strdup(path), *save = NULL;
	if (!dir || !copy) {
		free(dir);
		free(copy);
		return -ENOMEM;
	}
	*l = mount_root(d->ns->root);
	snprintf(dir, cap, "%s", l->dir);
	for (char *w = strtok_r(copy, "/", &save); w;
	     w = strtok_r(NULL, "/", &save)) {
		size_t n = strlen(dir);
		snprintf(dir + n, cap - n, "%s%s", strcmp(dir, "/") ? "/" : "",
			 w);
		while ((c = mount_at(&d->g, l->m, dir))) {
			l->m = c;
			snprintf(dir, cap, "%s", c->root);
		}
	}
	free(copy);
	l->dir = *buf = dir;
	l->file = stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
	return 0;
}

/* Host paths of a list of mounts, on one line after label. */
static void say_paths(struct dry_apply *d, const char *label,
		      struct mount **v, size_t n)
{
	struct loc host = mount_root(d->ns->root);
	fprintf(d->out, "    %s:", label);
	for (size_t i = 0; i < n; i++) {
		int err = 0;
		char *p = mount_path(v[i], host, &err);
		fprintf(d->out, " %s", p ? p : "(out of sight)");
		free(p);
	}
	fprintf(d->out, "%s\n", n ? "" : " nowhere");
}

/* The copies the plan makes outside the line's own tree at target: the
 * receivers of this mount (semantics.md 3). */
static void say_copies(struct dry_apply *d, const char *target)
{
	struct loc host = mount_root(d->ns->root);
	struct mount **v = calloc(d->g.nsteps + 1, sizeof *v);
	size_t n = 0;
	for (size_t i = 0; v && i < d->g.nsteps; i++) {
		const struct step *s = &d->g.steps[i];
		struct mount *m = mount_by_id(&d->g, s->mnt);
		int err = 0;
		char *p = m ? mount_path(m, host, &err) : NULL;
		if ((s->kind == STEP_NEW || s->kind == STEP_BIND) && m &&
		    (!p || !mtab_under(p, target)))
			v[n++] = m;
		free(p);
	}
	if (v)
		say_paths(d, "copies at", v, n);
	free(v);
}

/* Where a slave receives from: its master's group. */
static void say_masters(struct dry_apply *d, struct mount *m)
{
	struct mount *v[256], *p = m->master;
	size_t n = 0;
	while (p && n < 256) {
		v[n++] = p;
		if (!p->group || (p = next_peer(p)) == m->master)
			break;
	}
	if (n)
		say_paths(d, "receives from", v, n);
}

/* Where later mounts at m would propagate: its peers, and the slaves of
 * its group (semantics.md 2). */
static void say_receivers(struct dry_apply *d, struct mount *m)
{
	struct mount *v[256], *p = m;
	size_t n = 0;
	do {
		for (struct list *l = p->slaves.next; l != &p->slaves &&
		     n < 256; l = l->next)
			v[n++] = list_entry(l, struct mount, slave);
		if (p != m && n < 256)
			v[n++] = p;
	} while (m->group && (p = next_peer(p)) != m);
	say_paths(d, "propagates to", v, n);
}

/* One call of the apply, planned by the engine and committed there. */
static int dry_mount(void *ctx, const struct jt_entry *e,
		     const struct mcall *mc)
{
	struct dry_apply *d = ctx;
	struct caller c = { true, d->ns, mount_root(d->ns->root) };
	unsigned long ms = mc->flags;
	struct loc at, from;
	char *b1 = NULL, *b2 = NULL;
	int kind = mount_call(&ms), err = place_of(d, mc->target, &at, &b1);
	(void)e;
	if (!(d->out = open_memstream(&d->text, &d->len)))
		return -ENOMEM;
	plan_begin(&d->g);
	if (err || kind < 0)
		err = err ? err : kind;
	else if (kind == CALL_REMOUNT || kind == CALL_REMOUNT_BIND)
		err = op_remount(&d->g, &c, at, ms);
	else if (kind == CALL_CHANGE)
		err = op_change(&d->g, &c, at, (int)ms);
	else if (kind == CALL_BIND && !(err = place_of(d, mc->source, &from,
						       &b2)))
		err = op_bind(&d->g, &c, from, at, ms & LS_MS_REC);
	else if (kind == CALL_NEW)
		err = op_mount_fs(&d->g, &c, at, fs_new(&d->g, mc->type, ""),
				  mc->source, ms);
	if (!err && (kind == CALL_BIND || kind == CALL_NEW))
		say_copies(d, mc->target);
	free(b1);
	free(b2);
	if (err)
		plan_abandon(&d->g);
	else
		plan_commit(&d->g);
	if (!err && kind == CALL_CHANGE && !place_of(d, mc->target, &at, &b1)) {
		say_masters(d, at.m);
		say_receivers(d, at.m);
		free(b1);
	}
	fclose(d->out);
	if (err) {
		free(d->text);
		d->text = NULL;
	}
	return err;
}

/* What the last call reaches, after its line. */
static void dry_note(void *ctx, FILE *out)
{
	struct dry_apply *d = ctx;
	if (d->text)
		fputs(d->text, out);
	free(d->text);
	d->text = NULL;
}

/* The engine's table as the host's root sees it. */
static int dry_table(void *ctx, char **text)
{
	struct dry_apply *d = ctx;
	size_t len;
	FILE *f = open_memstream(text, &len);
	if (!f)
		return -ENOMEM;
	render_mountinfo(&d->g, d->ns, mount_root(d->ns->root), f);
	return fclose(f) == 0 ? 0 : -ENOMEM;
}

/* The starting table: the broker's, else the kernel's. */
static int start_table(const char *addr, char **text)
{
	struct backend live;
	FILE *f;
	size_t len;
	broker_backend(&live, addr);
	if (live.table(live.ctx, text) == 0)
		return 0;
	fprintf(stderr, "sharectl: no broker at %s: starting from the "
		"kernel's table, where nothing propagates\n", addr);
	if (!(f = fopen("/proc/self/mountinfo", "re")))
		return -errno;
	*text = NULL;
	if (getdelim(text, &len, '\0', f) < 0) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	return 0;
}

/* A backend that plans on an engine graph of the broker's table. */
int dry_backend(struct backend *b, const char *addr)
{
	struct dry_apply *d = calloc(1, sizeof *d);
	struct mtab t = { 0 };
	struct mount **m = NULL;
	char *text = NULL;
	int err = d ? start_table(addr, &text) : -ENOMEM;
	if (!err)
		err = mtab_parse(&t, text);
	if (!err && !(m = calloc(t.n + 1, sizeof *m)))
		err = -ENOMEM;
	if (!err) {
		graph_init(&d->g, 0);
		d->ns = ns_new(&d->g);
		d->addr = addr;
		build(d, &t, m);
		restore(d, &t, m);
		err = d->ns->root ? 0 : -EINVAL;
	}
	free(m);
	if (text)
		mtab_free(&t);
	if (err && d && d->ns)
		graph_free(&d->g);
	if (err) {
		free(d);
		return err;
	}
	*b = (struct backend){ dry_table, dry_mount, dry_note, d,
			       "would " };
	return 0;
}

void dry_backend_free(struct backend *b)
{
	struct dry_apply *d = b->ctx;
	graph_free(&d->g);
	free(d);
}
