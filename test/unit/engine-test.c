/* engine-test: what the kernel-differential suite cannot show natively
 * (raw ids, MNT_EXPIRE, the caller's own root, namespace copies, the mount
 * limit at small sizes) and that an abandoned plan leaves no trace. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#define TAP_MAIN
#include "engine-help.h"
#include "tap.h"

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

static unsigned busy_asked;

static bool count_busy(void *ctx, const struct mount *m)
{
	(void)ctx, (void)m;
	busy_asked++;
	return false;
}

/* graph.kernel_marks (the broker, issue 29): the kernel marks and judges
 * busy; the second call's own unmount is the plan's first, flagged. */
static void expire_kernel(void)
{
	struct dry d;
	setup(&d, 0);
	free(run(&d, "mkdir -p $B/a $B/b\nmount -t tmpfs A $B/a\n"
		 "mount --make-shared $B/a\nmount --bind $B/a $B/b\n"
		 "mkdir -p $B/a/m\nmount -t tmpfs M $B/a/m\n"));
	d.g.kernel_marks = true;
	struct caller c = host(&d);
	char *buf;
	struct loc l = where(&d, "/w/a/m", &buf);
	struct mount *m = l.m, *copy = at(&d, "/w/b/m");
	plan_begin(&d.g);
	ok(op_umount(&d.g, &c, l, LS_MNT_EXPIRE, count_busy, NULL) == -EAGAIN &&
	   !m->expiry_mark && busy_asked == 0 && d.g.nsteps == 0,
	   "kernel marks: the first call asks the kernel, the engine marks "
	   "nothing");
	plan_abandon(&d.g);
	m->expiry_mark = true;     /* the kernel's EAGAIN, kept by the broker */
	plan_begin(&d.g);
	int err = op_umount(&d.g, &c, l, LS_MNT_EXPIRE, count_busy, NULL);
	size_t first = 0, n = 0;
	while (first < d.g.nsteps && d.g.steps[first].kind != STEP_UMOUNT)
		first++;
	for (size_t i = 0; i < d.g.nsteps; i++)
		n += d.g.steps[i].expire;
	ok(err == 0 && first < d.g.nsteps && d.g.steps[first].mnt == m->id &&
	   d.g.steps[first].expire && !d.g.steps[first].alone && n == 1 &&
	   copy && copy != m,
	   "kernel marks: the second call's unmount is the plan's first, "
	   "alone");
	ok(plan_commit(&d.g) == 0 && at(&d, "/w/b/m")->fs->type[0] == 't' &&
	   strcmp(at(&d, "/w/a/m")->devname, "A") == 0,
	   "kernel marks: the plan takes the copy along, as a plain umount");
	free(buf);
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

/* issue 11: a jailed caller's copy holds its root's mount and what is
 * under its root; freeing it propagates nothing and leaves a sound graph. */
static void namespace_view_and_free(void)
{
	struct dry d;
	setup(&d, 0);
	free(run(&d, "mkdir -p $B/j/m $B/s\nmount -t tmpfs M $B/j/m\n"
		 "mount --make-shared $B/j/m\nmount -t tmpfs S $B/s\n"));
	unsigned before = d.ns->count, groups = next_id(&d.g.group_ids);
	char *buf;
	struct caller c = { true, d.ns, where(&d, "/w/j", &buf) };
	struct ns *child = NULL;
	struct loc copy;
	plan_begin(&d.g);
	ok(op_copy_view(&d.g, &c, never, NULL, &child, &copy) == 0 &&
	   plan_commit(&d.g) == 0 && child->count == 3 &&
	   copy.m->parent == child->root && !strcmp(copy.dir, "/j"),
	   "a jail's copy: its root's mount, its parent, the mount under "
	   "its root");
	char *info = dump(&d, child);
	ok(strstr(info, "/ /w/j/m rw,relatime shared:1 - tmpfs M") &&
	   !strstr(info, "tmpfs S"), "the peer stays in its group; /w/s is "
	   "outside the jail");
	free(info);
	free(run(&d, "mkdir -p $B/j/m/x\nmount -t tmpfs X $B/j/m/x\n"));
	ok(child->count == 4, "a mount under the peer reaches the copy");
	plan_begin(&d.g);
	ok(op_free_ns(&d.g, child) == 0 && plan_commit(&d.g) == 0,
	   "the copy is freed");
	ok(check_invariants(&d.g) == 0 && d.ns->count == before + 1 &&
	   d.g.nss.next->next == &d.g.nss,
	   "nothing of the teardown reached the parent; one namespace left");
	info = dump(&d, d.ns);
	ok(strstr(info, "/w/j/m/x rw,relatime shared:2 - tmpfs X") &&
	   next_id(&d.g.group_ids) == groups + 1,
	   "the parent's peers keep their groups");
	free(info);
	free(buf);
	dry_free(&d);
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
	expire_kernel();
	own_root();
	same_superblock();
	namespace_copy();
	namespace_view_and_free();
	rendering();
	return tap_done();
}
