/* show.c: what sharectl tree and graph show, rendered by the engine.
 *
 * The text has a line per mount, and a host has thousands: more than a
 * reply's LS_REPLY_MAX.  So it goes into an unlinked file of the state
 * directory, and the reply carries a descriptor of it (SCM_RIGHTS).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "broker.h"

/* A file nobody else can open: O_TMPFILE, or on kernels before 3.11 (and
 * filesystems without it) a file unlinked as soon as it is made. */
static int scratch(const char *dir)
{
	int fd = open(dir, O_TMPFILE | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	char *path;
	if (fd >= 0)
		return fd;
	if (asprintf(&path, "%s/reply.XXXXXX", dir) < 0)
		return -ENOMEM;
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	else
		unlink(path);
	free(path);
	return fd;
}

/* A scratch file to write the reply's text to (*f); returns its
 * descriptor, which text_done() closes. */
static int text_open(const char *dir, FILE **f)
{
	int fd = scratch(dir), w;
	if (fd < 0)
		return fd;
	if ((w = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0 || !(*f = fdopen(w, "w"))) {
		int err = -errno;
		if (w >= 0)
			close(w);
		close(fd);
		return err;
	}
	return fd;
}

/* The text is written (wrote: the renderer's 0 or -errno); *pass gets a
 * read-only descriptor of it.  Not the writable one: that would let any
 * caller, an unprivileged jailed one too, fill the state directory's
 * filesystem. */
static int text_done(FILE *f, int fd, int *pass, int wrote)
{
	char proc[64];
	int err = fclose(f) == 0 ? wrote : -errno;
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	if (!err && (*pass = open(proc, O_RDONLY | O_CLOEXEC)) < 0)
		err = -errno;
	close(fd);
	return err;
}

/* The tree as a process whose root is dir sees it, dir looked up like any
 * of the caller's paths (inside its root: a jail sees no more than its
 * own); without dir, as the caller itself sees it. */
int show_tree(struct request *r, const char *pid, const char *dir, int *pass)
{
	struct broker *b = r->b;
	struct named n = { .fd = -1 };
	struct loc root;
	char *buf = NULL;
	FILE *f;
	int err = pid && dir ? -EINVAL : dir ? resolve(r, dir, RES_FOLLOW, &n) :
		  pid ? pid_view(r, pid, &root, &buf) :
		  fd_loc(b, r->caller.root, &root, &buf);
	if (dir && !err)
		root = n.at;
	if (!err && root.file)
		err = -ENOTDIR;
	if (!err && (err = text_open(b->state_dir, &f)) >= 0) {
		int fd = err;
		err = text_done(f, fd, pass,
				render_tree(root.m->ns, root, false, f));
	}
	named_free(&n);
	free(buf);
	return err;
}

/* The propagation graph, with every jail the broker has seen: its root
 * found again from its path (NULL when the directory is gone). */
int show_graph(struct request *r, int *pass)
{
	struct broker *b = r->b;
	unsigned n = HASH_COUNT(b->jails), i = 0;
	struct view *v = calloc(n + 1, sizeof *v);
	char **bufs = calloc(n + 1, sizeof *bufs);
	FILE *f;
	int err = v && bufs ? 0 : -ENOMEM;
	for (struct jail *j = b->jails; !err && j; j = j->hh.next, i++) {
		int fd = open(j->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		v[i].name = j->path;
		if (fd < 0 || fd_loc(b, fd, &v[i].root, &bufs[i]) < 0) {
			v[i].root.m = NULL;
			bufs[i] = NULL;
		}
		if (fd >= 0)
			close(fd);
	}
	if (!err && (err = text_open(b->state_dir, &f)) >= 0) {
		int fd = err;
		err = text_done(f, fd, pass,
				render_graph(&b->g, b->ns, v, i, f));
	}
	for (unsigned k = 0; bufs && k < n; k++)
		free(bufs[k]);
	free(bufs);
	free(v);
	return err;
}

/* The caller's own mount table (semantics.md 1.5): mountinfo or the
 * /proc/mounts format, for its root as it is now, so that a mount that
 * just returned is listed.  A file of the broker's FUSE filesystem, which
 * renders again at every read from offset 0 and signals changes; without
 * FUSE a snapshot. */
int show_table(struct request *r, const char *which, const char *pid,
	       int *pass)
{
	struct broker *b = r->b;
	bool info = which && strcmp(which, "mountinfo") == 0;
	struct loc root;
	char *buf = NULL;
	FILE *f;
	if (!info && (!which || strcmp(which, "mounts") != 0))
		return -EINVAL;
	int err = pid ? pid_view(r, pid, &root, &buf) :
			fd_loc(b, r->caller.root, &root, &buf);
	if (!err && b->tab)        /* live: read fresh, polled (fusetab.c) */
		err = fusetab_open(b, root, info, pass);
	else if (!err && (err = text_open(b->state_dir, &f)) >= 0) {
		int fd = err;
		err = text_done(f, fd, pass, (info ? render_mountinfo :
			render_mounts)(&b->g, root.m->ns, root, f));
	}
	free(buf);
	return err;
}
