/* gen_cwd.c: the generator's steps from a cwd inside the sandbox, with
 * paths relative to it (test/diff/gen.c). */
#include <stdio.h>
#include <string.h>
#include "gen.h"

/* cd DIR: on the host, or in DIR's jail with the jail's name for it. */
void op_cd(struct gen *g)
{
	const char *d = chance(g, 50) ? mounted_dir(g) : any_dir(g);
	const char *jail = in_jail(d, "$B/j1") ? "$B/j1" :
			   in_jail(d, "$B/j2") ? "$B/j2" : NULL;

	if (jail && chance(g, 30))
		jail = NULL;
	if (jail)
		printf("chroot %s cd %s\n", jail, d + JAIL_LEN);
	else
		printf("cd %s\n", d);
	g->cwd = d;
	g->cwd_jail = jail;
}

/* A path relative to the cwd: the forms whose lookup differs by call. */
static const char *rel_path(struct gen *g)
{
	static const char *const dots[] = { ".", "./.", "..", ".//." };
	size_t n = strlen(g->cwd), i;
	unsigned w = rnd(g, 8);

	if (w < 5)
		return dots[w % 4];
	if (w == 5) {              /* back in through the parent: the top */
		snprintf(g->rel, sizeof g->rel, "../%s",
			 strrchr(g->cwd, '/') + 1);
		return g->rel;
	}
	for (i = 0; i < ndirs; i++)
		if (strncmp(dirs[i], g->cwd, n) == 0 && dirs[i][n] == '/' &&
		    !strchr(dirs[i] + n + 1, '/'))
			return dirs[i] + n + 1;
	return ".";
}

/* An absolute path in the cwd's root. */
static const char *abs_path(struct gen *g)
{
	return g->cwd_jail ? jail_dir(g, g->cwd_jail, chance(g, 60)) + JAIL_LEN
			   : target(g);
}

/* A call from the cwd with a relative path, or a mount that covers it. */
void op_rel(struct gen *g)
{
	const char *r = rel_path(g), *a = abs_path(g);
	unsigned w = rnd(g, 100);

	if (w < 20) {                  /* cover the cwd: by its absolute name */
		printf("mount -t tmpfs T%d %s\n", ++g->ntmpfs, g->cwd);
		push_mounted(g, g->cwd);
		remkdir(g->cwd);
		return;
	}
	/* Nothing goes onto "..": the cwd's mount may have moved (with the
	 * cwd) to just under $B, or out of its jail, and its ".." be the
	 * sandbox, which the harness's views need uncovered. */
	if (strcmp(r, "..") == 0 && ((w >= 42 && w < 66) || (w >= 82 && w < 86)))
		r = "./.";
	if (g->cwd_jail)
		printf("chroot %s ", g->cwd_jail);
	if (w < 42)
		printf("umount2 %s\n", r);
	else if (w < 54)
		printf("mount -c -t tmpfs T%d %s\n", ++g->ntmpfs, r);
	else if (w < 66)
		printf("mount -c --bind %s %s\n", a, r);
	else if (w < 76)
		printf("mount -c --bind %s %s\n", r, a);
	else if (w < 82)
		printf("mount -c --move %s %s\n", r, a);
	else if (w < 86)
		printf("mount -c --move %s %s\n", a, r);
	else if (w < 94)
		printf("mount -c --make-%s %s\n",
		       makes[rnd(g, (unsigned)nmakes)], r);
	else               /* not umount(8): it makes r absolute first,
			    * by the cwd's name, which sharedry has not */
		printf("umount2 --nofollow %s\n", r);
	if (w >= 42 && w < 66)
		remkdir(g->cwd);
}
