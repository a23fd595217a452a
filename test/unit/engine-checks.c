/* engine-checks.c: engine-test's checks of the edges: rendering, the
 * privilege check, the checker itself, mount(2)'s dispatch and the flag
 * tables. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "engine-help.h"
#include "tap.h"

void rendering(void)
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
void unprivileged(void)
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

/* The checker that guards every operation must itself catch a broken
 * graph: each corruption below breaks one invariant of 1.1, then is
 * repaired. */
void checker_catches(void)
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

/* mount(2)'s dispatch (2.1, S36): the first kind that applies wins. */
void dispatch(void)
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
void flag_tables(void)
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
