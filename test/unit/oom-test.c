/* oom-test: the out-of-memory rule of engine.h, proved by injection.
 *
 * Every script of the kernel-differential corpus runs twice in lockstep
 * through the dry run: once as it is (the reference), once with every
 * system call (one engine operation and its plan) retried with its first,
 * second, third... engine allocation failing, until a try meets no
 * failure.  A failed try must answer ENOMEM and leave a complete dump of
 * the graph byte-identical to the one before; the try that meets no
 * failure must print what the reference printed and leave the graph the
 * reference has.  The renderers are failed the same way at the end of
 * each script.  Run under valgrind (oom-valgrind.test), no failure may
 * leak.
 *
 *   oom-test [SCRIPT...]      default: every script of test/diff/corpus
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "dry.h"
#define TAP_MAIN
#include "tap.h"

#ifndef CORPUS
#define CORPUS "test/diff/corpus"
#endif

/* Every try of a call dumps and checks the whole graph: the cost grows
 * with the square of its size.  A script stops being followed once its
 * graph is this big (only s14, the mount explosion, gets there: its 4th
 * rbind would make 1764 mounts), and says so. */
enum { MOUNT_LIMIT = 40 };

/* What one script's run found wrong, the first time only. */
struct verdict {
	char why[512];
	unsigned long calls, injected;
};

static void fail(struct verdict *v, const char *fmt, const char *a, long b)
{
	if (!v->why[0])
		snprintf(v->why, sizeof v->why, fmt, a, b);
}

static int by_value(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return (x > y) - (x < y);
}

/* A pool as the ids it hands out from now on: the free ids below its
 * true end, then the end (ids given back at the top join it), whatever
 * the heap's layout. */
static void dump_pool(FILE *o, const char *name, const struct idpool *p)
{
	unsigned *v = malloc((p->n + 1) * sizeof *v), next = p->next;
	size_t n = p->n;
	if (n)                 /* heap is NULL while nothing was freed */
		memcpy(v, p->heap, n * sizeof *v);
	qsort(v, n, sizeof *v, by_value);
	while (n && v[n - 1] == next - 1) {
		next--;
		n--;
	}
	fprintf(o, "%s free", name);
	for (size_t i = 0; i < n; i++)
		fprintf(o, " %u", v[i]);
	fprintf(o, " from %u\n", next);
	free(v);
}

static unsigned id_of(const struct mount *m)
{
	return m ? m->id : 0;
}

static void dump_mount(FILE *o, const struct mount *m)
{
	/* not MNT_EXPIRE's mark (engine.h: not the graph): a first call
	 * whose checker snapshot failed still marks and answers EAGAIN */
	fprintf(o, "m%u seq %llu parent %u mp %s root %s dev %s flags %x "
		"group %u master %u ub %d file %d dead %d ns %u "
		"fs %u:%u refs %u sb %x %s %s peer %u; slaves",
		m->id, (unsigned long long)m->seq, id_of(m->parent), m->mp,
		m->root, m->devname, m->flags, m->group, id_of(m->master),
		m->unbindable, m->file, m->dead, m->ns->id,
		m->fs->major, m->fs->dev, m->fs->refs, m->fs->flags,
		m->fs->type, m->fs->opts, next_peer(m)->id);
	for (const struct list *l = m->slaves.next; l != &m->slaves; l = l->next)
		fprintf(o, " %u", list_entry(l, struct mount, slave)->id);
	fputs("; children", o);
	for (const struct list *l = m->mounts.next; l != &m->mounts; l = l->next)
		fprintf(o, " %u", list_entry(l, struct mount, child)->id);
	fputc('\n', o);
}

/* Everything the graph is: every namespace's mountinfo, every mount with
 * its links in order, the creation order, the id pools, the counters,
 * and an empty journal. */
static char *dump(struct dry *d)
{
	struct graph *g = &d->g;
	char *out = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&out, &len);
	for (struct list *l = g->nss.next; l != &g->nss; l = l->next) {
		struct ns *ns = list_entry(l, struct ns, link);
		fprintf(o, "ns %u count %u root %u\n", ns->id, ns->count,
			id_of(ns->root));
		if (ns->root && render_mountinfo(g, ns, mount_root(ns->root), o))
			fputs("render failed\n", o);
	}
	for (size_t id = 0; id < g->capid; id++)
		if (g->by_id[id])
			dump_mount(o, g->by_id[id]);
	fputs("order", o);
	for (struct list *l = g->order.next; l != &g->order; l = l->next)
		fprintf(o, " %u", list_entry(l, struct mount, order)->id);
	fputc('\n', o);
	dump_pool(o, "mount ids", &g->mount_ids);
	dump_pool(o, "group ids", &g->group_ids);
	fprintf(o, "mounts %u keys %zu seq %llu fs %u ns %u journal %zu "
		"dead %zu planning %d\n", g->nmounts, g->keys.n,
		(unsigned long long)g->seq, g->next_fs, g->next_ns, g->nundo,
		g->ndead, g->planning);
	fclose(o);
	return out;
}

static struct verdict *current;

/* MNT_EXPIRE's marks, which a try that answers EAGAIN sets and the next
 * try of the same call must not find: each try is the one call. */
static bool *marks_get(const struct graph *g)
{
	bool *v = calloc(g->capid + 1, sizeof *v);
	for (size_t id = 0; v && id < g->capid; id++)
		v[id] = g->by_id[id] && g->by_id[id]->expiry_mark;
	return v;
}

static void marks_put(struct graph *g, const bool *v, size_t n)
{
	for (size_t id = 0; v && id < g->capid && id < n; id++)
		if (g->by_id[id])
			g->by_id[id]->expiry_mark = v[id];
}

/* dry_call() for the injected run: the call with its k-th allocation
 * failing, k = 1, 2, ... until a try meets no failure.  A failed try
 * answers ENOMEM, or the error the call answers anyway (a refusal comes
 * before the operation allocates; the checker's snapshot does not). */
static int inject(struct cmd *k, dry_op op, const void *arg)
{
	struct verdict *v = current;
	char *before = dump(k->d);
	bool *marks = marks_get(&k->d->g);
	size_t nmarks = k->d->g.capid;
	int err = 0, other = 0;
	long at = 0;
	v->calls++;
	for (long n = 1; ; n++) {
		marks_put(&k->d->g, marks, nmarks);
		eng_fail_at(n);
		err = dry_call_once(k, op, arg);
		eng_fail_at(0);
		if (!eng_failures())
			break;
		v->injected++;
		char *after = dump(k->d);
		if (strcmp(before, after) != 0)
			fail(v, "%s: allocation %ld failed, the graph changed",
			     k->w[0], n);
		if (err != -ENOMEM && !other) {
			other = err;
			at = n;
		}
		free(after);
	}
	if (other && other != err)
		fail(v, "%s: allocation %ld failed, the call answered neither "
		     "ENOMEM nor its own error", k->w[0], at);
	free(before);
	free(marks);
	return err;
}

/* One script line through d, its printed result returned. */
static char *run_line(struct dry *d, const char *line, unsigned n)
{
	char *out = NULL;
	size_t len = 0;
	FILE *in = fmemopen((void *)line, strlen(line), "r");
	FILE *o = open_memstream(&out, &len), *saved = stdout;
	d->line = n - 1;
	stdout = o;
	dry_run(d, in);
	stdout = saved;
	fclose(o);
	fclose(in);
	return out;
}

/* Each renderer fails at each of its allocations with -ENOMEM. */
static void renderers(struct dry *d, struct verdict *v)
{
	struct loc host = mount_root(d->ns->root);
	struct view jail = { "host", host };
	for (int which = 0; which < 4; which++)
		for (long n = 1; ; n++) {
			FILE *o = fopen("/dev/null", "w");
			eng_fail_at(n);
			int err = which == 0 ? render_mountinfo(&d->g, d->ns, host, o) :
				  which == 1 ? render_mounts(&d->g, d->ns, host, o) :
				  which == 2 ? render_tree(d->ns, host, true, o) :
				  render_graph(&d->g, d->ns, &jail, 1, o);
			eng_fail_at(0);
			fclose(o);
			if (!eng_failures())
				break;
			v->injected++;
			if (err != -ENOMEM)
				fail(v, "renderer %s: allocation %ld failed, "
				     "no ENOMEM", (const char *[]){ "mountinfo",
				     "mounts", "tree", "graph" }[which], n);
		}
}

static void setup(struct dry *d)
{
	memset(d, 0, sizeof *d);
	d->base = "/tmp/w";
	d->check = true;
	if (dry_init(d, 0) < 0)
		abort();
}

/* The script line by line through both runs. */
static void script(const char *path)
{
	struct verdict v = { .why = "" };
	struct dry ref, d;
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	unsigned n = 0, stop = 0;
	setup(&ref);
	setup(&d);
	d.around = inject;
	current = &v;
	while (f && getline(&line, &cap, f) >= 0) {
		if (ref.g.nmounts > MOUNT_LIMIT) {
			stop = n + 1;
			break;
		}
		line[strcspn(line, "\n")] = '\0';
		char *want = run_line(&ref, line, ++n), *got = run_line(&d, line, n);
		char *want_g = dump(&ref), *got_g = dump(&d);
		if (strcmp(want, got) != 0) {
			fail(&v, "line %2$ld (%1$s): not the reference's result",
			     line, n);
			if (getenv("OOM_DEBUG"))
				fprintf(stderr, "want <%s> got <%s>\n", want, got);
		}
		else if (strcmp(want_g, got_g) != 0)
			fail(&v, "line %2$ld (%1$s): not the reference's graph",
			     line, n);
		free(want); free(got); free(want_g); free(got_g);
	}
	renderers(&d, &v);
	char upto[64] = "";
	if (stop)
		snprintf(upto, sizeof upto, " (up to line %u: %u mounts by then)",
			 stop - 1, ref.g.nmounts);
	ok(f && !v.why[0], "%s: %lu calls, %lu allocations failed cleanly%s",
	   strrchr(path, '/') ? strrchr(path, '/') + 1 : path, v.calls,
	   v.injected, upto);
	if (v.why[0])
		printf("# %s\n", v.why);
	if (f)
		fclose(f);
	free(line);
	dry_free(&ref);
	dry_free(&d);
}

/* One call of the broker's import family (sync.c), k = 1, 2, ... until a
 * try meets no failure: each failed try answers ENOMEM and changes
 * nothing.  Returns how many tries failed, -1 on a wrong one. */
typedef int (*sync_call)(struct dry *d, struct mount *at);

/* The filesystem the next import gets, made before each try (its id is
 * taken for good then, as in the broker, which makes it outside a plan). */
static struct fs *fresh;

static long sync_tries(struct dry *d, struct mount *at, sync_call call)
{
	long failed = 0;
	for (long n = 1; ; n++) {
		if (fresh)         /* not the import's: unused */
			fs_put(fresh);
		fresh = fs_new(&d->g, "tmpfs", "size=1k");
		char *before = dump(d);
		eng_fail_at(n);
		int err = call(d, at);
		eng_fail_at(0);
		if (!eng_failures()) {
			free(before);
			break;
		}
		char *after = dump(d);
		if (err != -ENOMEM || strcmp(before, after) != 0)
			failed = -1;
		else if (failed >= 0)
			failed++;
		free(before);
		free(after);
	}
	if (fresh)
		fs_put(fresh);
	fresh = NULL;
	return failed;
}

/* An import fails whole: the fresh filesystem goes with it. */
static int import(struct dry *d, struct mount *at)
{
	struct fs *fs = fresh;
	fresh = NULL;
	return graph_import(&d->g, d->ns, at, "/i", fs, "/", "I",
			    MNT_RELATIME) ? 0 : -ENOMEM;
}

static int rename_it(struct dry *d, struct mount *at)
{
	struct mount *i = mount_at(&d->g, at, "/i");
	return mount_rename(&d->g, i, "/renamed", "/j");
}

static int restore(struct dry *d, struct mount *at)
{
	struct mount *j = mount_at(&d->g, at, "/j");
	plan_begin(&d->g);
	int err = mount_restore(&d->g, j, true, NULL, NULL, false);
	if (err)
		plan_abandon(&d->g);
	else
		plan_commit(&d->g);
	return err;
}

static int forget(struct dry *d, struct mount *at)
{
	return graph_forget(&d->g, mount_at(&d->g, at, "/j"));
}

/* What sharebrokerd learns from the kernel, outside the operations. */
static void sync_calls(void)
{
	static const struct { const char *name; sync_call call; } t[] = {
		{ "graph_import", import }, { "mount_rename", rename_it },
		{ "mount_restore", restore }, { "graph_forget", forget },
	};
	struct dry d;
	setup(&d);
	struct mount *base = topmost(&d.g, d.ns->root);
	d.check = d.g.check = false;  /* the broker's graph has no checker */
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		long n = sync_tries(&d, base, t[i].call);
		ok(n > 0, "%s: %ld allocations failed cleanly", t[i].name, n);
	}
	ok(!mount_at(&d.g, base, "/j") && d.g.nmounts == 2,
	   "and the last tries did the work: imported, renamed, shared, forgotten");
	dry_free(&d);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			script(argv[i]);
		return tap_done();
	}
	sync_calls();
	const char *dir = getenv("OOM_CORPUS") ? getenv("OOM_CORPUS") : CORPUS;
	DIR *dp = opendir(dir);
	char *names[512];
	size_t n = 0;
	for (struct dirent *e; dp && (e = readdir(dp)) && n < 512; )
		if (strlen(e->d_name) > 3 &&
		    strcmp(e->d_name + strlen(e->d_name) - 3, ".sh") == 0 &&
		    asprintf(&names[n], "%s/%s", dir, e->d_name) > 0)
			n++;
	if (dp)
		closedir(dp);
	ok(n > 0, "the corpus is at %s (%zu scripts)", dir, n);
	qsort(names, n, sizeof *names, by_name);
	for (size_t i = 0; i < n; i++) {
		script(names[i]);
		free(names[i]);
	}
	return tap_done();
}
