/*
 * gen [--legacy] SEED - print a random scenario for the kernel-differential
 * harness.
 *
 * 20 to 40 operations (mount with options, remount, umount, pivot_root,
 * namespace copies and operations inside them, hold, release; mkdir
 * lines are extra) over a fixed set of directories, a few files and two
 * chroot jails, $B/j1 and $B/j2, whose roots may themselves get mounted on.
 * The generator keeps a rough list of what it has mounted so that most
 * commands hit mounts and succeed; the rest exercise the error paths. The
 * PRNG is self-contained, so a seed gives the same script everywhere.
 *
 * Some steps run from a cwd inside the sandbox (issue 13): "cd DIR", on
 * the host or in a jail ("chroot $B/j1 cd /x"), then commands that name
 * paths relative to it (".", "./.", "..", "../NAME", a subdirectory) with
 * the paths as given (mount -c, and umount2, the system call itself), and
 * mounts on the cwd's directory by its absolute name, which cover the cwd:
 * each call's own lookup rule then shows.  While a cwd is set no lazy
 * umount is made (a cwd on a detached mount leaves the namespace).
 *
 * --legacy marks the scripts for the broker under the legacy simulation
 * (broker-run.sh).  It used to leave out namespace copies, which the broker
 * now makes too (issue 11): its scripts have "unshare" and "within" steps
 * like the others, and every seed's script is the one without --legacy.
 * (The cwd steps changed every seed's script; a seed gives the same script
 * everywhere since then.)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gen.h"

/* Every directory a scenario uses; jails are $B/j1 and $B/j2. */
const char *const dirs[] = {
	"$B/a", "$B/b", "$B/c", "$B/a/d1", "$B/b/d1", "$B/c/d1", "$B/a/d1/e",
	"$B/j1/x", "$B/j1/y", "$B/j1/x/d1", "$B/j2/x", "$B/j2/y", "$B/j2/x/d1",
	"$B/j1",
};

/* Files: bind sources and targets (file onto directory is ENOTDIR). */
static const char *const files[] = { "$B/a/f", "$B/c/f", "$B/j1/f" };
#define NFILES (sizeof(files) / sizeof(files[0]))
#define NDIRS (sizeof(dirs) / sizeof(dirs[0]))
const size_t ndirs = NDIRS;

const char *const makes[] = {
	"shared", "shared", "shared", "shared", "slave", "slave", "slave",
	"private", "private", "unbindable", "rshared", "rshared", "rslave",
	"rprivate", "runbindable",
};
const size_t nmakes = sizeof(makes) / sizeof(makes[0]);


unsigned rnd(struct gen *g, unsigned n)
{
	g->state ^= g->state >> 12;
	g->state ^= g->state << 25;
	g->state ^= g->state >> 27;
	return (unsigned)((g->state * 0x2545F4914F6CDD1DULL) >> 32) % n;
}

int chance(struct gen *g, unsigned percent)
{
	return rnd(g, 100) < percent;
}

static void seed(struct gen *g, uint64_t s)
{
	/* splitmix64 step: any seed, including 0, gives a good state */
	s += 0x9E3779B97F4A7C15ULL;
	s = (s ^ (s >> 30)) * 0xBF58476D1CE4E5B9ULL;
	s = (s ^ (s >> 27)) * 0x94D049BB133111EBULL;
	memset(g, 0, sizeof(*g));
	g->state = (s ^ (s >> 31)) | 1;
}

void push_mounted(struct gen *g, const char *d)
{
	if (g->nmounted < MAX_MOUNTED)
		g->mounted[g->nmounted++] = d;
}

static void drop_mounted(struct gen *g, const char *d)
{
	int i;

	for (i = g->nmounted - 1; i >= 0; i--)
		if (g->mounted[i] == d) {
			g->mounted[i] = g->mounted[--g->nmounted];
			return;
		}
}

const char *any_dir(struct gen *g)
{
	return dirs[rnd(g, NDIRS)];
}

const char *mounted_dir(struct gen *g)
{
	return g->nmounted ? g->mounted[rnd(g, g->nmounted)] : any_dir(g);
}

/* Target of a new mount: mostly a directory, sometimes a stack. */
const char *target(struct gen *g)
{
	return chance(g, 35) ? mounted_dir(g) : any_dir(g);
}

/* A fresh filesystem on D hides the directories below D: recreate them. */
void remkdir(const char *d)
{
	size_t n = strlen(d), i;
	int any = 0;

	for (i = 0; i < NDIRS; i++)
		if (strncmp(dirs[i], d, n) == 0 && dirs[i][n] == '/') {
			printf(any ? " %s" : "mkdir -p %s", dirs[i]);
			any = 1;
		}
	if (any)
		putchar('\n');
}

/* Mount options: per-mount, superblock, and their opposites. */
static const char *const options[] = {
	"ro", "rw", "nosuid", "nodev,noexec", "noatime", "strictatime",
	"sync", "ro,lazytime", "suid,dev", "relatime,nosymfollow",
};
#define NOPTIONS (sizeof(options) / sizeof(options[0]))

static void op_tmpfs(struct gen *g)
{
	const char *t = target(g);

	if (chance(g, 20))
		printf("mount -t tmpfs -o %s T%d %s\n",
		       options[rnd(g, NOPTIONS)], ++g->ntmpfs, t);
	else
		printf("mount -t tmpfs T%d %s\n", ++g->ntmpfs, t);
	push_mounted(g, t);
	remkdir(t);
}

static void op_make(struct gen *g)
{
	const char *t = chance(g, 85) ? mounted_dir(g) : any_dir(g);

	printf("mount --make-%s %s\n", makes[rnd(g, sizeof(makes) / sizeof(makes[0]))], t);
}

static void op_bind(struct gen *g)
{
	const char *src = chance(g, 70) ? mounted_dir(g) : any_dir(g);
	const char *dst = target(g);

	printf("mount --bind %s %s\n", src, dst);
	push_mounted(g, dst);
	remkdir(dst);
}

/* rbind, sometimes of a tree into its own subdirectory; both are capped
 * because each can multiply the number of mounts (semantics.md 4.3). */
static void op_rbind(struct gen *g)
{
	static const char *const self[][2] = {
		{ "$B/a", "$B/a/d1" }, { "$B/b", "$B/b/d1" },
		{ "$B/c", "$B/c/d1" }, { "$B/j1/x", "$B/j1/x/d1" },
	};
	const char *src, *dst;

	if (g->nrbind >= MAX_RBIND) {
		op_bind(g);
		return;
	}
	g->nrbind++;
	if (g->nrbind_self < MAX_RBIND_SELF && chance(g, 35)) {
		unsigned i = rnd(g, 4);

		g->nrbind_self++;
		src = self[i][0];
		dst = self[i][1];
	} else {
		src = mounted_dir(g);
		dst = target(g);
	}
	printf("mount --rbind %s %s\n", src, dst);
	push_mounted(g, dst);
	remkdir(dst);
}

static void op_move(struct gen *g)
{
	const char *src = mounted_dir(g), *dst = target(g);

	printf("mount --move %s %s\n", src, dst);
	drop_mounted(g, src);
	push_mounted(g, dst);
}

static void op_umount(struct gen *g)
{
	const char *t = mounted_dir(g);

	printf("umount %s%s\n", chance(g, 40) && !g->cwd ? "-l " : "", t);
	drop_mounted(g, t);
}

int in_jail(const char *d, const char *jail)
{
	return strncmp(d, jail, JAIL_LEN) == 0 && d[JAIL_LEN] == '/';
}

/* A directory of JAIL (host form), preferably one that is mounted. */
const char *jail_dir(struct gen *g, const char *jail, int mounted)
{
	const char *pick[NDIRS > MAX_MOUNTED ? NDIRS : MAX_MOUNTED];
	unsigned n = 0, i;

	for (i = 0; mounted && i < (unsigned)g->nmounted; i++)
		if (in_jail(g->mounted[i], jail))
			pick[n++] = g->mounted[i];
	if (n == 0)
		for (i = 0; i < NDIRS; i++)
			if (in_jail(dirs[i], jail))
				pick[n++] = dirs[i];
	return pick[rnd(g, n)];
}

/* The same operations, issued from inside a jail with jail paths. */
static void op_jail(struct gen *g)
{
	const char *jail = chance(g, 60) ? "$B/j1" : "$B/j2";
	const char *a = jail_dir(g, jail, chance(g, 60));
	const char *b = jail_dir(g, jail, 0);
	unsigned what = rnd(g, 100);

	printf("chroot %s ", jail);
	if (what < 30) {
		printf("mount -t tmpfs T%d %s\n", ++g->ntmpfs, b + JAIL_LEN);
		push_mounted(g, b);
		remkdir(b);
	} else if (what < 50) {
		printf("mount --bind %s %s\n", a + JAIL_LEN, b + JAIL_LEN);
		push_mounted(g, b);
		remkdir(b);
	} else if (what < 75) {
		printf("mount --make-%s %s\n", makes[rnd(g, sizeof(makes) / sizeof(makes[0]))], a + JAIL_LEN);
	} else if (what < 85) {
		printf("umount %s%s\n", chance(g, 40) && !g->cwd ? "-l " : "",
		       a + JAIL_LEN);
		drop_mounted(g, a);
	} else if (what < 92) {
		printf("mount --move %s %s\n", a + JAIL_LEN, b + JAIL_LEN);
		drop_mounted(g, a);
		push_mounted(g, b);
	} else if (what < 96) {
		/* x/d1 lies under x in both jails: put_old under new_root */
		const char *x = strcmp(a + JAIL_LEN, "/x") == 0 ? "/x" : "/x/d1";
		printf("pivot_root %s %s/d1\n", x, x);
	} else {
		printf("mkdir -p %s/d1\n", jail_dir(g, jail, 0) + JAIL_LEN);
	}
}

/* remount with some options, of the filesystem or of the mount alone */
static void op_remount(struct gen *g)
{
	printf("mount -o remount,%s%s %s\n", chance(g, 50) ? "bind," : "",
	       options[rnd(g, NOPTIONS)], mounted_dir(g));
}

/* bind a file onto a file, or now and then onto a directory or back */
static void op_file(struct gen *g)
{
	const char *f = files[rnd(g, NFILES)], *t = files[rnd(g, NFILES)];

	if (chance(g, 20))
		printf("mount --bind %s %s\n", f, any_dir(g));
	else if (chance(g, 10))
		printf("mount --bind %s %s\n", mounted_dir(g), t);
	else
		printf("mount --bind %s %s\n", f, t);
}

/* hold a mount busy, or release one held before. */
static int op_hold(struct gen *g)
{
	const char *d = mounted_dir(g);
	int i;

	/* A DIR is held once at a time: "release DIR" must name one holder. */
	for (i = 0; i < g->nheld; i++)
		if (g->held[i] == d)
			d = NULL;
	if (d && g->nheld < MAX_HELD && (g->nheld == 0 || chance(g, 50))) {
		g->held[g->nheld++] = d;
		printf("hold %s\n", d);
		return 1;
	}
	if (g->nheld == 0)
		return 0;
	i = rnd(g, g->nheld);
	printf("release %s\n", g->held[i]);
	g->held[i] = g->held[--g->nheld];
	return 1;
}

/* A mount operation, on the host or (by the caller) inside a namespace. */
static void op_mount(struct gen *g)
{
	unsigned w = rnd(g, 96);

	if (w < 16)
		op_tmpfs(g);
	else if (w < 35)
		op_make(g);
	else if (w < 48)
		op_bind(g);
	else if (w < 54)
		op_rbind(g);
	else if (w < 61)
		op_move(g);
	else if (w < 70)
		op_umount(g);
	else if (w < 89)
		op_jail(g);
	else if (w < 93)
		op_file(g);
	else
		op_remount(g);
}

/* A copy of the namespace (two at most), or a mount operation in one. */
static void op_ns(struct gen *g)
{
	if (g->nns < 2 && (g->nns == 0 || chance(g, 25))) {
		printf("unshare n%d\n", ++g->nns);
		return;
	}
	printf("within n%u ", 1 + rnd(g, (unsigned)g->nns));
	op_mount(g);
}

/* One operation; returns 0 if nothing counted as an operation was printed. */
static int op(struct gen *g)
{
	unsigned w = rnd(g, 100);

	if (chance(g, g->cwd ? 30 : 8)) {
		if (!g->cwd || chance(g, 15))
			op_cd(g);
		else
			op_rel(g);
	} else if (w < 88)
		op_mount(g);
	else if (w < 94)
		op_ns(g);
	else
		return op_hold(g);
	return 1;
}

int main(int argc, char **argv)
{
	struct gen g;
	char *end;
	uint64_t s;
	int n, i, legacy = 0, a;

	for (a = 1; a < argc - 1; a++)
		if (strcmp(argv[a], "--legacy") == 0)
			legacy = 1;
		else
			break;
	if (a != argc - 1 || (s = strtoull(argv[a], &end, 0), *end)) {
		fprintf(stderr, "usage: gen [--legacy] SEED\n");
		return 2;
	}
	seed(&g, s);
	g.legacy = legacy;
	printf("# gen %s%s\n", legacy ? "--legacy " : "", argv[a]);
	for (i = 0; i < (int)NDIRS; i++)
		printf(i ? " %s" : "mkdir -p %s", dirs[i]);
	putchar('\n');
	for (i = 0; i < (int)NFILES; i++)
		printf(i ? " %s" : "touch %s", files[i]);
	putchar('\n');
	for (n = 20 + rnd(&g, 21); n > 0;)
		n -= op(&g);
	while (g.nheld)
		printf("release %s\n", g.held[--g.nheld]);
	return 0;
}
