/* dry.c: the dry run's commands: util-linux mount/umount/mkdir as engine
 * operations, one plan each, committed when the operation succeeds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "dry.h"
#include "vec.h"

#define MAXW 16

int dry_init(struct dry *d, unsigned max_mounts)
{
	struct loc host, at;
	char *buf;
	struct fs *fs;
	graph_init(&d->g, max_mounts);
	d->g.check = d->check;
	d->g.checker = &engine_checker;
	if (!(d->ns = ns_new(&d->g)) ||
	    !(fs = fs_new(&d->g, "rootfs", NULL)) ||
	    graph_set_root(&d->g, d->ns, fs, "rootfs", MNT_RELATIME) < 0)
		return -1;
	host = mount_root(d->ns->root);
	if (dry_lookup(d, host, d->base, MKDIR, &at, &buf) < 0)
		return -1;
	struct caller c = { true, d->ns, host };
	plan_begin(&d->g);
	fs = fs_new(&d->g, "tmpfs", NULL);
	int err = fs ? op_mount_fs(&d->g, &c, at, fs, "BASE", 0) : -ENOMEM;
	free(buf);
	if (err) {
		plan_abandon(&d->g);
		return -1;
	}
	return plan_commit(&d->g);
}

void dry_free(struct dry *d)
{
	struct dirs *s, *t;
	struct dent *e, *f;
	HASH_ITER(hh, d->dirs, s, t) {
		HASH_ITER(hh, s->set, e, f) {
			HASH_DEL(s->set, e);
			free(e->path);
			free(e);
		}
		HASH_DEL(d->dirs, s);
		free(s);
	}
	for (size_t i = 0; i < d->nholds; i++)
		free(d->holds[i].name);
	free(d->holds);
	for (size_t i = 0; i < d->nnss; i++)
		free(d->nss[i].name);
	free(d->nss);
	free(d->cwd.dir);
	graph_free(&d->g);
}

static bool held(void *ctx, const struct mount *m)
{
	struct dry *d = ctx;
	if (d->cwd.set && d->cwd.seq == m->seq)
		return true;       /* the cwd's process uses it (5.3) */
	for (size_t i = 0; i < d->nholds; i++)
		if (d->holds[i].seq == m->seq)
			return true;
	return false;
}

/* Split a line into words, bash-like: quotes, backslashes, $B and ${B}. */
static int split(const struct dry *d, const char *s, char *w[MAXW])
{
	int n = 0;
	while (*s) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s || *s == '#')
			break;
		size_t cap = strlen(s) + strlen(d->base) * 8 + 1, len = 0;
		char *out = malloc(cap), q = 0;
		if (!out || n == MAXW)
			abort();
		for (; *s && (q || (*s != ' ' && *s != '\t')); s++) {
			if (!q && (*s == '\'' || *s == '"')) {
				q = *s;
			} else if (q && *s == q) {
				q = 0;
			} else if (!q && *s == '\\' && s[1]) {
				out[len++] = *++s;
			} else if (q == '"' && *s == '\\' && s[1] &&
				   strchr("$`\"\\", s[1])) {
				out[len++] = *++s;
			} else if (q != '\'' && strncmp(s, "${B}", 4) == 0) {
				len += (size_t)sprintf(out + len, "%s", d->base);
				s += 3;
			} else if (q != '\'' && strncmp(s, "$B", 2) == 0) {
				len += (size_t)sprintf(out + len, "%s", d->base);
				s += 1;
			} else {
				out[len++] = *s;
			}
		}
		out[len] = '\0';
		w[n++] = out;
	}
	return n;
}

/* The flag an umount2 option names (-e MNT_EXPIRE, -f MNT_FORCE), or 0. */
static int raw_flag(const char *w)
{
	return strcmp(w, "-e") == 0 ? LS_MNT_EXPIRE :
	       strcmp(w, "-f") == 0 ? LS_MNT_FORCE :
	       strcmp(w, "--nofollow") == 0 ? LS_UMOUNT_NOFOLLOW : 0;
}

/* umount [-l] PATH (util-linux canonicalizes PATH: the same place but for
 * "."), and umount2 PATH [-l] [-e] [-f] [--nofollow], the system call as
 * such: its last component goes to the top of the stack there
 * (LOOKUP_MOUNTPOINT), and its lookup is no use of the mount (the mark
 * stays).  There are no symlinks in the dry run: --nofollow changes
 * nothing. */
static int umount_op(struct cmd *k, const void *arg)
{
	int flags = 0, i;
	for (i = 1; i < k->n - 1; i++)
		if (strcmp(k->w[i], "-l") == 0)
			flags |= LS_MNT_DETACH;
		else if (!arg || !raw_flag(k->w[i]))
			return -EINVAL;
		else
			flags |= raw_flag(k->w[i]) & ~LS_UMOUNT_NOFOLLOW;
	struct loc l;
	char *buf;
	if (k->n < 2)
		return -EINVAL;
	int err = arg ? dry_lookup(k->d, k->c.root, k->w[k->n - 1], LOOKUP,
				   &l, &buf) : dry_at(k, k->n - 1, &l, &buf);
	if (!err) {
		dry_top(k->d, &l, buf);
		err = op_umount(&k->d->g, &k->c, l, flags, held, k->d);
		free(buf);
	}
	return err;
}

static int pivot_op(struct cmd *k, const void *arg)
{
	(void)arg;
	struct loc new, old;
	char *b1, *b2;
	if (k->n != 3)
		return -EINVAL;
	int err = dry_at(k, 1, &new, &b1);
	if (err)
		return err;
	err = dry_at(k, 2, &old, &b2);
	if (!err) {
		dry_top(k->d, &old, b2);   /* put_old: do_lock_mount() */
		dry_use(old.m);
		err = op_pivot_root(&k->d->g, &k->c, new, old);
		free(b2);
	}
	free(b1);
	return err;
}

/* mkdir -p DIR... and touch FILE... */
static void do_make(struct cmd *k, int make)
{
	for (int i = make == MKDIR ? 2 : 1; i < k->n; i++) {
		struct loc l;
		char *buf;
		if (dry_lookup(k->d, k->c.root, k->w[i], make, &l, &buf) == 0) {
			dry_use(l.m);
			free(buf);
		}
	}
}

static void do_hold(struct cmd *k, bool hold)
{
	struct dry *d = k->d;
	if (k->n != 2)
		return;
	if (!hold) {               /* every holder of that name exits */
		for (size_t i = d->nholds; i-- > 0; )
			if (strcmp(d->holds[i].name, k->w[1]) == 0) {
				dry_use(dry_mount_of(d, d->holds[i].seq));
				free(d->holds[i].name);
				d->holds[i] = d->holds[--d->nholds];
			}
		return;
	}
	struct loc l;
	char *buf;
	if (dry_at(k, 1, &l, &buf))
		return;
	free(buf);
	if (VEC_RESERVE(d->holds, d->capholds, d->nholds + 1) ||
	    !(d->holds[d->nholds].name = strdup(k->w[1])))
		abort();
	d->holds[d->nholds++].seq = l.m->seq;
}

/* use stat|open|chdir PATH: a process looks PATH up and exits. */
static void do_use(struct cmd *k)
{
	struct loc l;
	char *buf;
	if (k->n == 3 && dry_at(k, 2, &l, &buf) == 0)
		free(buf);
}

static struct ns *named(struct dry *d, const char *name)
{
	for (size_t i = 0; i < d->nnss; i++)
		if (strcmp(d->nss[i].name, name) == 0)
			return d->nss[i].ns;
	return NULL;
}

static int unshare_op(struct cmd *k, const void *arg)
{
	return op_copy_ns(&k->d->g, &k->c, (struct ns **)arg);
}

/* unshare NAME: util-linux unshare -m --propagation unchanged, a copy of
 * the caller's namespace (semantics.md 8).  Named once the plan is kept:
 * an abandoned copy is gone. */
static void do_unshare(struct cmd *k)
{
	struct dry *d = k->d;
	struct ns *ns;
	char *name = VEC_RESERVE(d->nss, d->capnss, d->nnss + 1) ? NULL :
		     strdup(k->w[1]);
	if (name && dry_call(k, unshare_op, &ns) == 0 && !d->abandon) {
		d->nss[d->nnss++] = (struct named_ns){ name, ns };
		return;
	}
	free(name);
}

/* A mount-family command: its result line, then the tree if asked. */
static void report(struct cmd *k, int err)
{
	printf("L%u %s\n", k->d->line, err ? strerrorname_np(-err) : "OK");
	if (!err && k->d->tree && dry_tree(k->d) < 0)
		printf("L%u tree: ENOMEM\n", k->d->line);
}

/* The commands whose result is printed: the mount family. */
static bool reports(const char *cmd)
{
	return strcmp(cmd, "mount") == 0 || strcmp(cmd, "umount") == 0 ||
	       strcmp(cmd, "umount2") == 0 ||
	       strcmp(cmd, "pivot_root") == 0;
}

static void run_line(struct dry *d, char **w, int n)
{
	struct cmd k = { d, { true, d->ns, mount_root(d->ns->root) }, w, n };
	char *rootbuf = NULL;

	if (k.n >= 3 && strcmp(k.w[0], "within") == 0) {
		struct ns *ns = named(d, k.w[1]);
		if (!ns)
			return;
		k.c.ns = ns;
		k.c.root = mount_root(ns->root);
		k.w += 2;
		k.n -= 2;
	}
	if (k.n >= 2 && strcmp(k.w[0], "chroot") == 0) {
		int err = dry_lookup(d, k.c.root, k.w[1], LOOKUP, &k.c.root,
				     &rootbuf);
		k.w += 2;
		k.n -= 2;
		if (err) {             /* chroot(2) fails: the command never runs */
			if (k.n && reports(k.w[0]))
				report(&k, err);
			return;
		}
	}
	if (k.n == 0)
		;
	else if (strcmp(k.w[0], "mount") == 0)
		report(&k, dry_mount(&k));
	else if (strcmp(k.w[0], "umount") == 0)
		report(&k, dry_call(&k, umount_op, NULL));
	else if (strcmp(k.w[0], "umount2") == 0)
		report(&k, dry_call(&k, umount_op, "raw"));
	else if (strcmp(k.w[0], "cd") == 0 && k.n == 2)
		dry_cd(d, k.c.root, k.w[1], rootbuf ? "/" : d->base);
	else if (strcmp(k.w[0], "pivot_root") == 0)
		report(&k, dry_call(&k, pivot_op, NULL));
	else if (strcmp(k.w[0], "mkdir") == 0 && k.n >= 2 &&
		 strcmp(k.w[1], "-p") == 0)
		do_make(&k, MKDIR);
	else if (strcmp(k.w[0], "touch") == 0)
		do_make(&k, TOUCH);
	else if (strcmp(k.w[0], "hold") == 0 ||
		 strcmp(k.w[0], "hold_fd") == 0 ||
		 strcmp(k.w[0], "release") == 0)
		do_hold(&k, k.w[0][0] == 'h');
	else if (strcmp(k.w[0], "use") == 0)
		do_use(&k);
	else if (strcmp(k.w[0], "unshare") == 0 && k.n == 2 && !named(d, k.w[1]))
		do_unshare(&k);
	else if (d->trace)
		printf("# skipped: %s\n", k.w[0]);
	free(rootbuf);
}

/* Runs the script; -1 when a check failed (the run stops there). */
int dry_run(struct dry *d, FILE *in)
{
	char *line = NULL;
	size_t cap = 0;
	while (!d->broken && getline(&line, &cap, in) >= 0) {
		char *w[MAXW];
		d->line++;
		line[strcspn(line, "\n")] = '\0';
		if (d->trace && line[0])
			printf(line[0] == '#' ? "%s\n" : "$ %s\n", line);
		int n = split(d, line, w);
		run_line(d, w, n);
		for (int i = 0; i < n; i++)
			free(w[i]);
	}
	free(line);
	return d->broken ? -1 : 0;
}

int dry_view(struct dry *d, const char *dir)
{
	struct ns *ns = d->ns;
	struct loc root;
	char *buf = NULL;
	const char *colon = strstr(dir, ":/");
	if (colon && strcmp(colon, ":/") == 0) {   /* NAME:/ a whole namespace */
		char *name = strndup(dir, (size_t)(colon - dir));
		if (!name) {
			fprintf(stderr, "sharedry: view %s: %s\n", dir,
				strerror(ENOMEM));
			return -1;
		}
		ns = named(d, name);
		free(name);
	}
	if (!ns) {
		fprintf(stderr, "sharedry: view %s: no such namespace\n", dir);
		return -1;
	}
	if (ns != d->ns)
		root = mount_root(ns->root);
	else if (dry_lookup(d, mount_root(ns->root), dir, LOOKUP, &root,
			    &buf) < 0) {
		/* hidden by a mount since: lsview (native-run.sh) shows
		 * nothing there either */
		printf("--- view %s\n", dir);
		return 0;
	}
	printf("--- view %s\n", dir);
	int err = render_mountinfo(&d->g, ns, root, stdout);
	free(buf);
	if (err)
		fprintf(stderr, "sharedry: view %s: %s\n", dir, strerror(-err));
	return err ? -1 : 0;
}

int dry_tree(struct dry *d)
{
	struct loc host = mount_root(d->ns->root);
	return render_tree(d->ns, host, true, stdout);
}
