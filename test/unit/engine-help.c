/* engine-help.c: what engine-test's parts share: a dry run set up at /w,
 * script lines run through it, lookups, and a dump of the table. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "engine-help.h"

void setup(struct dry *d, unsigned max)
{
	memset(d, 0, sizeof *d);
	d->base = "/w";
	d->check = true;
	if (dry_init(d, max) < 0)
		abort();
}

/* Run script lines; returns the printed result lines. */
char *run(struct dry *d, const char *script)
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

struct loc where(struct dry *d, const char *path, char **buf)
{
	struct loc l = { 0 };
	if (dry_lookup(d, mount_root(d->ns->root), path, LOOKUP, &l, buf))
		abort();
	return l;
}

struct mount *at(struct dry *d, const char *path)
{
	char *buf;
	struct loc l = where(d, path, &buf);
	free(buf);
	return l.m;
}

/* The id the pool hands out next: what the kernel would show. */
unsigned next_id(const struct idpool *p)
{
	return p->n ? p->heap[0] : p->next;
}

char *dump(struct dry *d, struct ns *ns)
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

bool never(void *ctx, const struct mount *m)
{
	(void)ctx;
	(void)m;
	return false;
}

struct caller host(struct dry *d)
{
	return (struct caller){ true, d->ns, mount_root(d->ns->root) };
}

int umount_path(struct dry *d, struct caller *c, const char *path,
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

void mkdir_p(struct dry *d, const char *path)
{
	char *buf;
	struct loc l;
	if (dry_lookup(d, mount_root(d->ns->root), path, MKDIR, &l, &buf) == 0)
		free(buf);
}
