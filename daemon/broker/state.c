/* state.c: what must survive a restart of the broker (design.md principle
 * 3).  The kernel keeps the mounts; only the broker knows how they
 * propagate: peer groups, masters, unbindable.  After every change the
 * broker writes that down, before it answers, and reads it back when it
 * starts, after importing the table.
 *
 * A line per mount that propagates, each propagation tree in pre-order
 * (peer rings, then slave lists, in order):
 *     <kernel mount id> <major:minor> <group> <master's mount id or 0>
 *     <unbindable 0|1> <root, escaped> <path, escaped>
 * then a line per mount whose children are listed in another order than
 * they were made (the table shows only the latter):
 *     children <kernel mount id> <its children's ids, in list order>
 * (escaped as in mountinfo, so that a line splits on its spaces)
 * then the namespace copies (nsstate.c), a line per namespace and one per
 * token handed out for it:
 *     ns <number> <root's kernel id> <major:minor> <root> <path>
 *        <root place's mount id> <root place, escaped>
 *     nstoken <number, 0: the broker's own> <socket inode> <member 0|1>
 *        <uid> <place's mount id> <place, escaped>
 * after the magic line, "# plan N": the last plan it holds (recover.c);
 * readers skip it, as any line that is not a mount's (a broker older than
 * the ns lines skips them too: its copies' mounts become its own, as
 * they did before these lines, so the format stays 2).
 * A line whose mount id now names another mount (not the same superblock,
 * root and place) is dropped: that mount went while the broker was away,
 * and the kernel gave its id to another.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysmacros.h>
#include "broker.h"
#include "mtparse.h"
#include "vec.h"

#define MAGIC "libshare-state 2"

static int kid_of(const struct broker *b, const struct mount *m)
{
	const struct handle *h = m ? handle_of(b, m) : NULL;
	return h ? h->kid : 0;
}

/* Where the kernel has the mount held by h now. */
static bool where(const struct handle *h, char *buf, size_t size)
{
	char *path = fd_path(h->fd);
	bool ok = path && strlen(path) < size;
	if (ok)
		strcpy(buf, path);
	free(path);
	return ok;
}

/* One line; the path where the kernel has m now, or with graph where the
 * graph puts it (an image of a plan not carried out yet, intent.c). */
static void put_mount(const struct broker *b, FILE *f, const struct mount *m,
		      bool graph)
{
	const struct handle *h = handle_of(b, m);
	/* a namespace copy's mounts, too, where the kernel will have them */
	char path[4096], *p = graph ? kernel_path(b, m) : NULL;
	if (graph ? !p || strlen(p) >= sizeof path : !where(h, path, sizeof path))
		goto out;
	if (p)
		strcpy(path, p);
	if (graph)
		fputs("= ", f);
	fprintf(f, "%d %u:%u %u %d %d ", h->kid, major(h->dev), minor(h->dev),
		m->group, kid_of(b, m->master), m->unbindable);
	put_escaped(f, m->root);
	fputc(' ', f);
	put_escaped(f, path);
	fputc('\n', f);
out:
	free(p);
}

/* Whether m's children are listed in another order than the kernel made
 * them (handle.c): the kernel's list is in order of attachment, which
 * the table does not show (a mount tucked under a stack, or moved, comes
 * after newer ones, and a plan's copies are made in the order of its
 * steps, not always the engine's). */
static bool reordered(const struct broker *b, const struct mount *m)
{
	uint64_t last = 0;
	for (const struct list *l = m->mounts.next; l != &m->mounts;
	     l = l->next) {
		const struct handle *h = handle_of(b, list_entry(l,
						   struct mount, child));
		if (h && h->made < last)
			return true;
		last = h ? h->made : last;
	}
	return false;
}

/* "children <kid> <kid>...": a parent and its children in list order,
 * for each parent whose order the import cannot guess (an older broker
 * skips these lines: they have not its 8 fields). */
static void put_children(const struct broker *b, FILE *f)
{
	for (struct list *l = b->g.order.next; l != &b->g.order; l = l->next) {
		const struct mount *m = list_entry(l, struct mount, order);
		if (!handle_of(b, m) || !reordered(b, m))
			continue;
		fprintf(f, "children %d", kid_of(b, m));
		for (const struct list *c = m->mounts.next; c != &m->mounts;
		     c = c->next)
			fprintf(f, " %d", kid_of(b, list_entry(c, struct mount,
							      child)));
		fputc('\n', f);
	}
}

/* Every mount that propagates, each propagation tree whole, peer rings
 * and slave lists in order: state_load() appends in line order, and the
 * order of a slave list is the order in which the copies of a propagation
 * are made.  The state proper (not an image) adds its children lines. */
static void put_all(struct broker *b, FILE *f, bool graph)
{
	unsigned seen = ++b->g.stamp;
	for (struct list *l = b->g.order.next; l != &b->g.order; l = l->next) {
		struct mount *m = list_entry(l, struct mount, order);
		if (m->stamp == seen || m->master ||
		    !(m->group || m->unbindable))
			continue;
		for (struct mount *p = m; p; p = propagation_next(p, m)) {
			p->stamp = seen;
			if (handle_of(b, p))
				put_mount(b, f, p, graph);
		}
	}
	if (!graph)
		put_children(b, f);
	nsstate_put(b, f, graph);
}

/* The state as the open plan will leave it, each line "= " and a state
 * line, paths from the graph: what recover.c writes as the state file if
 * a crash leaves the plan to be finished.  Only for plans whose mounts
 * all exist before they run (no NEW or BIND: their ids are the kernel's
 * to give). */
int state_image(struct broker *b, FILE *f)
{
	put_all(b, f, true);
	return ferror(f) ? -EIO : 0;
}

/* body as the state file, atomically (a new file renamed over the old).
 * Its plan line says which recorded plan it holds (recover.c). */
int state_write(struct broker *b, const char *body, size_t len)
{
	char *tmp, *path, head[80];
	int err = 0, fd;
	if (asprintf(&path, "%s/state", b->state_dir) < 0)
		return -ENOMEM;
	if (asprintf(&tmp, "%s.new", path) < 0) {
		free(path);
		return -ENOMEM;
	}
	int n = snprintf(head, sizeof head, MAGIC "\n# plan %llu\n",
			 b->intent.serial);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		err = -errno;
	} else {
		err = save_put(fd, head, (size_t)n) ?:
		      save_put(fd, body, len);
		if (close(fd) < 0 && !err)
			err = -errno;
		if (!err && rename(tmp, path) < 0)
			err = -errno;
		if (err)
			unlink(tmp);   /* what it took goes back */
	}
	if (err)
		log_msg(LOG_WARNING, "%s: %s", path, strerror(-err));
	free(tmp);
	free(path);
	return err;
}

/* Writes the state file: a line per mount that propagates. */
int state_save(struct broker *b)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	put_all(b, f, false);
	int err = fclose(f) == 0 ? state_write(b, text, len) : -ENOMEM;
	free(text);
	return err;
}

struct saved {
	int kid, master;
	unsigned maj, min, group;
	int unbindable;
	char root[4096], path[4096];
	struct mount *m;
};

/* The mount a saved line names, if the kernel still has it. */
static struct mount *still_there(struct broker *b, struct saved *s)
{
	struct mount *m = mount_of_kid(b, s->kid);
	const struct handle *h = m ? handle_of(b, m) : NULL;
	char now[4096];
	unescape(s->root);
	unescape(s->path);
	if (!h || major(h->dev) != s->maj || minor(h->dev) != s->min ||
	    strcmp(m->root, s->root) != 0 || !where(h, now, sizeof now) ||
	    strcmp(now, s->path) != 0)
		return NULL;
	return m;
}

/* The propagation lines of the file, and its "children" lines (any
 * length: a parent may have thousands of children) and namespace lines
 * in *kids. */
static struct saved *read_state(FILE *f, size_t *n, char ***kids, size_t *nk)
{
	struct saved *v = NULL, one;
	char *line = NULL;
	size_t cap = 0, kcap = 0, size = 0;
	*n = *nk = 0;
	*kids = NULL;
	while (getline(&line, &size, f) > 0) {
		char *copy = NULL;
		if (strncmp(line, "children ", 9) == 0 || nsstate_line(line)) {
			if (!(copy = strdup(line)) ||
			    VEC_PUSH(*kids, *nk, kcap, copy)) {
				free(copy);
				break;
			}
		} else if (sscanf(line, "%d %u:%u %u %d %d %4095s %4095s",
				  &one.kid, &one.maj, &one.min, &one.group,
				  &one.master, &one.unbindable, one.root,
				  one.path) == 8 && VEC_PUSH(v, *n, cap, one)) {
			break;
		}
	}
	free(line);
	return v;
}

/* A "children" line: the parent's list takes that order, when every mount
 * it names is still a child of it (graph_child_order()). */
static void restore_children(struct broker *b, char *line)
{
	struct mount **v = NULL, *parent = NULL;
	size_t n = 0, cap = 0;
	char *p = line + 9, *end;
	bool ok = true;
	for (long kid; ok && (kid = strtol(p, &end, 10), end != p); p = end) {
		struct mount *m = mount_of_kid(b, (int)kid);
		ok = m && !(parent && VEC_PUSH(v, n, cap, m));
		parent = parent ?: m;
	}
	if (ok && parent && n)
		graph_child_order(&b->g, parent, v, n);
	free(v);
}

/* Reads the state file back into the freshly imported graph. */
int state_load(struct broker *b)
{
	char *path;
	size_t n;
	if (asprintf(&path, "%s/state", b->state_dir) < 0)
		return -ENOMEM;
	FILE *f = fopen(path, "re");
	free(path);
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	char magic[64];
	if (!fgets(magic, sizeof magic, f) || strcmp(magic, MAGIC "\n") != 0) {
		fclose(f);             /* another format, or no state at all */
		statedir_set_aside(b, "not a state file of format 2");
		return 0;
	}
	char **kids;
	size_t nk;
	struct saved *v = read_state(f, &n, &kids, &nk);
	fclose(f);
	bool check = b->g.check;
	int err = 0;
	b->g.check = false;
	plan_begin(&b->g);
	for (size_t i = 0; i < n; i++) {
		struct mount *peer = NULL;
		if (!(v[i].m = still_there(b, &v[i])))
			continue;
		for (size_t j = 0; v[i].group && j < i && !peer; j++)
			if (v[j].m && v[j].group == v[i].group)
				peer = v[j].m;
		err = err ?: mount_restore(&b->g, v[i].m, v[i].group != 0,
					   peer, NULL, v[i].unbindable);
	}
	for (size_t i = 0; i < n; i++)
		if (v[i].m && v[i].master)
			err = err ?: mount_restore(&b->g, v[i].m, false, NULL,
						   mount_of_kid(b, v[i].master),
						   v[i].unbindable);
	if (err)                   /* all of the saved propagation, or none */
		plan_abandon(&b->g);
	else
		plan_commit(&b->g);
	b->g.check = check;
	for (size_t i = 0; i < nk; i++)
		if (strncmp(kids[i], "children ", 9) == 0)
			restore_children(b, kids[i]);
	nsstate_load(b, kids, nk);
	for (size_t i = 0; i < nk; i++)
		free(kids[i]);
	free(kids);
	free(v);
	return err;
}
