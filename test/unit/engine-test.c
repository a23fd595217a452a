/* engine-test: what the kernel-differential suite cannot show natively
 * (raw ids, MNT_EXPIRE, the caller's own root, namespace copies, the mount
 * limit at small sizes) and that an abandoned plan leaves no trace. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "dry.h"
#include "tap.h"

static void setup(struct dry *d, unsigned max)
{
	memset(d, 0, sizeof *d);
	d->base = "/w";
	d->check = true;
	if (dry_init(d, max) < 0)
		abort();
}

/* Run script lines; returns the printed result lines. */
static char *run(struct dry *d, const char *script)
{
	char *out = NULL;
	size_t len = 0;
	FILE *in = fmemopen((void *)script, strlen(script), "r");
	FILE *o = open_memstream(&out, &len);
	FILE *saved = stdout;
	stdout = o;
	dry_run(d, in);
	stdout = saved;
	fclose(o);
	fclose(in);
	return out;
}

static struct loc where(struct dry *d, const char *path, char **buf)
{
	struct loc l = { 0 };
	if (lookup(d, mount_root(d->ns->root), path, LOOKUP, &l, buf))
		abort();
	return l;
}

static struct mount *at(struct dry *d, const char *path)
{
	char *buf;
	struct loc l = where(d, path, &buf);
	free(buf);
	return l.m;
}

/* The id the pool hands out next: what the kernel would show. */
static unsigned next_id(const struct idpool *p)
{
	return p->n ? p->heap[0] : p->next;
}

static char *dump(struct dry *d, struct ns *ns)
{
	char *out = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&out, &len);
	render_mountinfo(&d->g, ns, mount_root(ns->root), o);
	fprintf(o, "mounts %u, next group %u, next mount %u\n",
		d->g.nmounts, next_id(&d->g.group_ids),
		next_id(&d->g.mount_ids));
	fclose(o);
	return out;
}

static bool never(void *ctx, const struct mount *m)
{
	(void)ctx;
	(void)m;
	return false;
}

static void group_ids(void)
{
	struct dry d;
	setup(&d, 0);
	free(run(&d, "mkdir -p $B/a $B/b $B/c $B/d\n"
		 "mount -t tmpfs A $B/a\nmount -t tmpfs B $B/b\n"
		 "mount -t tmpfs C $B/c\nmount -t tmpfs D $B/d\n"
		 "mount --make-shared $B/a\nmount --make-shared $B/b\n"
		 "mount --make-shared $B/c\n"));
	ok(at(&d, "/w/a")->group == 1 && at(&d, "/w/b")->group == 2 &&
	   at(&d, "/w/c")->group == 3, "S37: groups 1, 2, 3 in order");
	for (int i = 0; i < 3; i++) {
		free(run(&d, "mount --make-private $B/b\n"
			 "mount --make-shared $B/d\n"));
		ok(at(&d, "/w/d")->group == 2, "S37: the freed group 2 is reused (%d)", i);
		free(run(&d, "mount --make-private $B/d\nmount --make-shared $B/b\n"));
	}
	dry_free(&d);
}

static void mount_ids(void)
{
	struct dry d;
	setup(&d, 0);
	free(run(&d, "mkdir -p $B/a $B/b $B/c $B/d\nmount -t tmpfs A $B/a\n"
		 "mount -t tmpfs B $B/b\nmount -t tmpfs C $B/c\n"));
	unsigned b = at(&d, "/w/b")->id;
	free(run(&d, "umount $B/b\nmount -t tmpfs D $B/d\n"));
	ok(at(&d, "/w/d")->id == b, "S38: the new mount takes the freed id %u", b);
	char *s = dump(&d, d.ns);
	char *c = strstr(s, " /w/c "), *dd = strstr(s, " /w/d ");
	ok(c && dd && c < dd, "S38: listed after older mounts despite its id");
	free(s);
	dry_free(&d);
}

/* Every operation, planned then abandoned, leaves the same dump. */
static void abandon_restores(void)
{
	static const char *const ops[] = {
		"mount -t tmpfs N $B/a/x\n", "mount --bind $B/a $B/c\n",
		"mount --rbind $B/a $B/a/y\n", "mount --move $B/c $B/b/y\n",
		"mount --make-rslave $B/a\n", "mount --make-rprivate $B/b\n",
		"mount --make-rshared $B/c\n", "umount $B/b/x\n",
		"mount --make-runbindable $B/a\n", "umount -l $B/a\n",
	};
	struct dry d;
	setup(&d, 0);
	free(run(&d, "mkdir -p $B/a $B/b $B/c\nmount -t tmpfs A $B/a\n"
		 "mkdir -p $B/a/x $B/a/y\nmount --make-shared $B/a\n"
		 "mount --bind $B/a $B/b\nmount --make-slave $B/b\n"
		 "mount --make-shared $B/b\nmount -t tmpfs X $B/a/x\n"
		 "mount -t tmpfs C $B/c\n"));
	for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
		char *before = dump(&d, d.ns);
		d.abandon = true;
		char *r1 = run(&d, ops[i]);
		d.abandon = false;
		char *after = dump(&d, d.ns);
		char *r2 = run(&d, ops[i]);
		ok(strcmp(before, after) == 0 && strstr(r1, " OK") &&
		   strstr(r2, " OK"), "abandoned %.*s leaves the graph as it was",
		   (int)strlen(ops[i]) - 1, ops[i]);
		free(before);
		free(after);
		free(r1);
		free(r2);
	}
	dry_free(&d);
}

static void mount_limit(void)
{
	struct dry d;
	setup(&d, 12);   /* rootfs, BASE, then ten more at most */
	char *r = run(&d, "mkdir -p $B/r/tmp\nmount -t tmpfs R $B/r\n"
		      "mkdir -p $B/r/tmp/m1 $B/r/tmp/m2 $B/r/tmp/m3\n"
		      "mount --make-shared $B/r\n"
		      "mount --rbind $B/r $B/r/tmp/m1\n"
		      "mount --rbind $B/r $B/r/tmp/m2\n");
	char *before = dump(&d, d.ns);
	char *r2 = run(&d, "mount --rbind $B/r $B/r/tmp/m3\n");
	char *after = dump(&d, d.ns);
	ok(strstr(r, "L6 OK") && strstr(r2, "ENOSPC") && !strcmp(before, after),
	   "S14: over fs.mount-max the rbind fails with ENOSPC, nothing changed");
	ok(d.ns->count == 8, "S14: 2 + 6 mounts counted (%u)", d.ns->count);
	free(r); free(r2); free(before); free(after);
	dry_free(&d);

	/* The limit itself: the mounts the operation makes count once. */
	setup(&d, 4);            /* rootfs, BASE, then two */
	r = run(&d, "mkdir -p $B/a $B/b $B/c\n"
		"mount -t tmpfs A $B/a\nmount -t tmpfs B $B/b\n"
		"mount -t tmpfs C $B/c\n");
	ok(strstr(r, "L2 OK") && strstr(r, "L3 OK") && strstr(r, "L4 ENOSPC") &&
	   d.ns->count == 4, "fs.mount-max: exactly the limit fits (%u)",
	   d.ns->count);
	free(r);
	dry_free(&d);
	/* a mount and its copy need room for two: one is not enough */
	setup(&d, 6);            /* rootfs, BASE, s, t, then two */
	r = run(&d, "mkdir -p $B/s/x $B/t $B/u\nmount --bind $B/s $B/s\n"
		"mount --make-shared $B/s\nmount --bind $B/s $B/t\n"
		"mount -t tmpfs U $B/u\nmount -t tmpfs X $B/s/x\n"
		"umount $B/u\nmount -t tmpfs X $B/s/x\n");
	ok(strstr(r, "L6 ENOSPC") && strstr(r, "L8 OK") && d.ns->count == 6,
	   "fs.mount-max: a mount whose copy would not fit fails whole (%u)",
	   d.ns->count);
	free(r);
	dry_free(&d);
}

static struct caller host(struct dry *d)
{
	return (struct caller){ true, d->ns, mount_root(d->ns->root) };
}

static int umount_path(struct dry *d, struct caller *c, const char *path,
		       int flags)
{
	char *buf;
	struct loc l = where(d, path, &buf);
	plan_begin(&d->g);
	int err = op_umount(&d->g, c, l, flags, never, NULL);
	if (err)
		plan_abandon(&d->g);
	else
		err = plan_commit(&d->g);
	free(buf);
	return err;
}

static void expire(void)
{
	struct dry d;
	setup(&d, 0);
	free(run(&d, "mkdir -p $B/m\nmount -t tmpfs M $B/m\n"));
	struct caller c = host(&d);
	ok(op_umount_flags_ok(0x100) == -EINVAL && op_umount_flags_ok(LS_MNT_DETACH) == 0,
	   "S36: unknown umount flag bits are EINVAL");
	ok(umount_path(&d, &c, "/w/m", LS_MNT_EXPIRE | LS_MNT_DETACH) == -EINVAL,
	   "S36: MNT_EXPIRE|MNT_DETACH is EINVAL");
	ok(umount_path(&d, &c, "/w/m", LS_MNT_EXPIRE) == -EAGAIN,
	   "S36: first MNT_EXPIRE marks and answers EAGAIN");
	ok(umount_path(&d, &c, "/w/m", LS_MNT_EXPIRE) == 0 && at(&d, "/w/m")->fs->type[0] == 't' &&
	   strcmp(at(&d, "/w/m")->devname, "BASE") == 0, "S36: the second one unmounts");
	ok(umount_path(&d, &c, "/", LS_MNT_DETACH) == -EINVAL,
	   "S36: the namespace root cannot be detached");
	dry_free(&d);
}

static void own_root(void)
{
	struct dry d;
	setup(&d, 0);
	free(run(&d, "mkdir -p $B/j\nmount -t tmpfs J $B/j\n"));
	char *buf;
	struct caller c = { true, d.ns, where(&d, "/w/j", &buf) };
	struct mount *j = c.root.m;
	ok(umount_path(&d, &c, "/w/j", 0) == 0 && (j->fs->flags & SB_RDONLY) &&
	   at(&d, "/w/j") == j, "S36: umount of the own root remounts it read-only");
	char *info = dump(&d, d.ns);
	ok(strstr(info, "/w/j rw,relatime - tmpfs J ro") != NULL,
	   "S36: mountinfo shows the superblock read-only");
	ok(umount_path(&d, &c, "/w/j", LS_MNT_DETACH) == 0 &&
	   strcmp(at(&d, "/w/j")->devname, "BASE") == 0,
	   "S36: with MNT_DETACH the own root is detached");
	free(info);
	free(buf);
	dry_free(&d);
}

static void same_superblock(void)
{
	struct dry d;
	setup(&d, 0);
	free(run(&d, "mkdir -p $B/s $B/t\n"));
	struct caller c = host(&d);
	struct fs *sys = fs_new(&d.g, "sysfs", NULL);
	char *buf;
	struct loc s = where(&d, "/w/s", &buf);
	plan_begin(&d.g);
	ok(op_mount_fs(&d.g, &c, s, sys, "x", 0) == 0 && plan_commit(&d.g) == 0,
	   "S30: a sysfs mount");
	free(buf);
	s = where(&d, "/w/s", &buf);
	plan_begin(&d.g);
	ok(op_mount_fs(&d.g, &c, s, sys, "x", 0) == -EBUSY,
	   "S30: the same superblock on the same root is EBUSY");
	plan_abandon(&d.g);
	free(buf);
	s = where(&d, "/w/t", &buf);
	plan_begin(&d.g);
	ok(op_mount_fs(&d.g, &c, s, sys, "x", 0) == 0 && plan_commit(&d.g) == 0,
	   "S30: the same superblock elsewhere is fine");
	free(buf);
	dry_free(&d);
}

static void namespace_copy(void)
{
	struct dry d;
	setup(&d, 0);
	free(run(&d, "mkdir -p $B/s $B/p\nmount -t tmpfs S $B/s\n"
		 "mount --make-shared $B/s\nmount -t tmpfs P $B/p\n"
		 "mount --make-unbindable $B/p\n"));
	struct caller c = host(&d);
	struct ns *child;
	plan_begin(&d.g);
	ok(op_copy_ns(&d.g, &c, &child) == 0 && plan_commit(&d.g) == 0,
	   "S33: CLONE_NEWNS copies the namespace");
	char *info = dump(&d, child);
	ok(strstr(info, "/w/s rw,relatime shared:1 - tmpfs S") &&
	   strstr(info, "/w/p rw,relatime - tmpfs P"),
	   "S33: shared stays in its group; unbindable is dropped (6.18)");
	free(info);
	free(run(&d, "mkdir -p $B/s/x\nmount -t tmpfs X $B/s/x\n"));
	info = dump(&d, child);
	ok(strstr(info, "/w/s/x rw,relatime shared:2 - tmpfs X") != NULL,
	   "S33: a mount in the parent appears in the child");
	ok(child->count == d.ns->count, "both namespaces count %u mounts",
	   child->count);
	free(info);
	dry_free(&d);
}

static void rendering(void)
{
	struct dry d;
	setup(&d, 0);
	free(run(&d, "mkdir -p \"$B/sp ace\" \"$B/back\\\\slash\"\n"
		 "mount -t tmpfs \"SRC WITH SPACE\" \"$B/sp ace\"\n"
		 "mount -t tmpfs T \"$B/back\\\\slash\"\n"));
	char *info = dump(&d, d.ns);
	ok(strstr(info, "/ /w/sp\\040ace rw,relatime - tmpfs SRC\\040WITH\\040SPACE rw"),
	   "S35: spaces are \\040 in mountpoint and source");
	ok(strstr(info, "/w/back\\134slash"), "S35: backslash is \\134");
	char *out = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&out, &len);
	render_mounts(&d.g, d.ns, mount_root(d.ns->root), o);
	fclose(o);
	ok(strstr(out, "SRC\\040WITH\\040SPACE /w/sp\\040ace tmpfs rw,relatime 0 0\n"),
	   "/proc/mounts: source mountpoint fstype opts 0 0");
	free(out);
	free(info);
	dry_free(&d);
}

/* Without CAP_SYS_ADMIN every operation is EPERM, before anything else
 * is looked at (section 10, first row). */
static void unprivileged(void)
{
	struct dry d;
	setup(&d, 0);
	free(run(&d, "mkdir -p $B/a $B/b\nmount -t tmpfs A $B/a\n"));
	char *b1, *b2;
	struct loc a = where(&d, "/w/a", &b1), b = where(&d, "/w/b", &b2);
	struct caller c = host(&d);
	struct ns *ns;
	c.privileged = false;
	char *before = dump(&d, d.ns);
	plan_begin(&d.g);
	ok(op_change(&d.g, &c, a, LS_MS_SHARED) == -EPERM &&
	   op_bind(&d.g, &c, a, b, false) == -EPERM &&
	   op_move(&d.g, &c, a, b) == -EPERM &&
	   op_umount(&d.g, &c, a, 0, never, NULL) == -EPERM &&
	   op_pivot_root(&d.g, &c, a, b) == -EPERM &&
	   op_copy_ns(&d.g, &c, &ns) == -EPERM,
	   "an unprivileged caller gets EPERM from every operation");
	struct fs *fs = fs_new(&d.g, "tmpfs", NULL);
	ok(op_mount_fs(&d.g, &c, b, fs, "X", 0) == -EPERM,
	   "and from a new mount");
	plan_abandon(&d.g);
	char *after = dump(&d, d.ns);
	ok(strcmp(before, after) == 0, "nothing changed");
	free(before);
	free(after);
	free(b1);
	free(b2);
	dry_free(&d);
}

static void mkdir_p(struct dry *d, const char *path);

/* The checker that guards every operation must itself catch a broken
 * graph: each corruption below breaks one invariant of 1.1, then is
 * repaired. */
static void checker_catches(void)
{
	struct dry d;
	setup(&d, 0);
	free(run(&d, "mkdir -p $B/a $B/b $B/c\nmount -t tmpfs A $B/a\n"
		 "mount --make-shared $B/a\nmount --bind $B/a $B/b\n"
		 "mount -t tmpfs C $B/c\nmount --make-shared $B/c\n"));
	struct mount *a = at(&d, "/w/a"), *b = at(&d, "/w/b"), *c = at(&d, "/w/c");
	ok(check_invariants(&d.g) == 0, "a sound graph passes");
	unsigned cg = c->group;
	c->group = a->group;           /* two rings, one id */
	ok(check_invariants(&d.g) == -EPROTO, "one group id on two rings is caught");
	c->group = cg;
	b->group = cg;                 /* a ring whose members disagree */
	ok(check_invariants(&d.g) == -EPROTO, "a ring with two ids is caught");
	b->group = a->group;
	a->unbindable = true;          /* unbindable and shared */
	ok(check_invariants(&d.g) == -EPROTO, "shared and unbindable is caught");
	a->unbindable = false;
	c->master = c;                 /* a master cycle, not on a slave list */
	ok(check_invariants(&d.g) == -EPROTO, "a master cycle is caught");
	c->master = NULL;
	ok(check_invariants(&d.g) == 0, "repaired, it passes again");

	/* a plan missing its last step does not end in the graph */
	mkdir_p(&d, "/w/a/x");
	char *buf;
	struct loc x = where(&d, "/w/a/x", &buf);
	struct caller h = { true, d.ns, mount_root(d.ns->root) };
	plan_begin(&d.g);
	ok(op_mount_fs(&d.g, &h, x, fs_new(&d.g, "tmpfs", NULL), "X", 0) == 0 &&
	   d.g.nsteps == 2, "a mount on a shared mount plans two steps");
	free(d.g.steps[--d.g.nsteps].dir);
	ok(plan_commit(&d.g) == -EPROTO, "a plan that misses the copy is caught");
	free(buf);
	dry_free(&d);
}

static void mkdir_p(struct dry *d, const char *path)
{
	char *buf;
	struct loc l;
	if (lookup(d, mount_root(d->ns->root), path, MKDIR, &l, &buf) == 0)
		free(buf);
}

/* mount(2)'s dispatch (2.1, S36): the first kind that applies wins. */
static void dispatch(void)
{
	static const struct { unsigned long ms; int call; const char *what; } t[] = {
		{ LS_MS_BIND | LS_MS_SHARED, CALL_BIND, "MS_BIND|MS_SHARED is a bind" },
		{ LS_MS_MOVE | LS_MS_SHARED, CALL_CHANGE, "MS_MOVE|MS_SHARED a type change" },
		{ LS_MS_REMOUNT | LS_MS_BIND | LS_MS_RDONLY, CALL_REMOUNT_BIND,
		  "MS_REMOUNT|MS_BIND a bind-remount" },
		{ LS_MS_REMOUNT | LS_MS_SHARED, CALL_REMOUNT, "MS_REMOUNT wins over types" },
		{ LS_MS_MOVE, CALL_MOVE, "MS_MOVE a move" },
		{ LS_MS_MGC_VAL | LS_MS_RDONLY, CALL_NEW, "the old magic is dropped" },
		{ LS_MS_NOUSER, -EINVAL, "MS_NOUSER is EINVAL" },
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		unsigned long ms = t[i].ms;
		ok(mount_call(&ms) == t[i].call, "%s", t[i].what);
	}
	struct dry d;
	setup(&d, 0);
	free(run(&d, "mkdir -p $B/a\nmount -t tmpfs A $B/a\n"));
	char *buf;
	struct loc a = where(&d, "/w/a", &buf);
	struct caller c = host(&d);
	plan_begin(&d.g);
	ok(op_change(&d.g, &c, a, LS_MS_SHARED | LS_MS_MOVE) == -EINVAL &&
	   op_change(&d.g, &c, a, LS_MS_SHARED | LS_MS_PRIVATE) == -EINVAL &&
	   op_change(&d.g, &c, a, LS_MS_SHARED | LS_MS_RDONLY) == -EINVAL &&
	   op_change(&d.g, &c, a, LS_MS_SHARED | LS_MS_REC | LS_MS_SILENT) == 0,
	   "S36: a type change takes one type, plus MS_REC and MS_SILENT only");
	plan_abandon(&d.g);
	free(buf);
	dry_free(&d);
}

/* flags.c: each family read both ways gives back what it was given. */
static void flag_tables(void)
{
	const struct flag_table *t[] = { &mnt_flag_table, &sb_flag_table };
	bool both_ways = true;
	for (size_t i = 0; i < 2; i++)
		for (size_t j = 0; j < t[i]->n; j++) {
			const struct flag *f = &t[i]->v[j];
			both_ways &= flags_of_ms(t[i], flags_ms(t[i], f->bit)) == f->bit &&
				     flag_by_name(t[i], f->name, strlen(f->name)) == f;
		}
	ok(both_ways, "flag tables: bit -> MS_* -> bit and name -> entry");
	ok(flags_named(&mnt_flag_table, "rw,nosuid,relatime,size=1k") ==
	   (MNT_NOSUID | MNT_RELATIME) &&
	   flags_named(&sb_flag_table, "ro,lazytime,mode=755") ==
	   (SB_RDONLY | SB_LAZYTIME),
	   "mountinfo option lists read back, the filesystem's own skipped");
	ok(mount_options(LS_MS_RDONLY, "nosuid,rw,bind,size=1k,nosuid") ==
	   (LS_MS_NOSUID | LS_MS_BIND) && mount_options(7, NULL) == 7,
	   "mount -o: left to right, rw clears ro, unknown names pass");
	ok(mount_flags(LS_MS_NOATIME | LS_MS_RELATIME, 0) == MNT_NOATIME &&
	   mount_flags(LS_MS_STRICTATIME, 0) == 0 &&
	   mount_flags(LS_MS_REMOUNT | LS_MS_RDONLY, MNT_NOATIME) ==
	   (MNT_RDONLY | MNT_NOATIME),
	   "mount(2) flags: relatime by default, MS_RELATIME itself unread");
}

int main(void)
{
	flag_tables();
	dispatch();
	checker_catches();
	unprivileged();
	group_ids();
	mount_ids();
	abandon_restores();
	mount_limit();
	expire();
	own_root();
	same_superblock();
	namespace_copy();
	rendering();
	return tap_done();
}
