/* quickwalk.c: a plain path in one lookup.
 *
 * resolve.c walks a caller's path a name at a time (four system calls a
 * name) so that ".." stops at the caller's root, symlinks expand inside
 * it, and each directory is searched with the caller's permission.  A
 * plain path needs none of that: no "." or ".." in it, no symlink on the
 * way, a caller who may search every directory and follow any magic link
 * (CAP_DAC_READ_SEARCH or CAP_DAC_OVERRIDE, and CAP_SYS_ADMIN: resolve.c
 * would let it too), and no filesystem whose server may hang mounted
 * anywhere (one lookup there could hold the broker: slow.c).
 *
 * The kernel looks such a path up in one openat(2) from the caller's root
 * or cwd.  Whether the path was plain is read from where it ended: had the
 * kernel followed a symlink or a magic link on the way, its path of the
 * result would not be the start's with the names sent after it (procfs's
 * self names the broker there, so it never matches).  Anything else, an
 * error included, goes the long way, which gives the caller's errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker.h"
#include "base/base.h"
#include "hold/hold.h"
#include "resolve/resolve.h"

/* The kernel's path of what start followed by path names, if it is
 * plain: names without "." or "..", no trailing slash.  *rel: path
 * without its leading slashes.  NULL when not plain. */
static char *plain(const char *start, const char *path, const char **rel)
{
	size_t s = strcmp(start, "/") == 0 ? 0 : strlen(start);
	char *want = malloc(s + strlen(path) + 2), *w = want + s;
	const char *p = path;
	if (!want)
		return NULL;
	memcpy(want, start, s);
	while (*p == '/')
		p++;
	*rel = p;
	while (*p) {
		size_t n = strcspn(p, "/");
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' &&
						p[1] == '.'))
			break;
		*w++ = '/';
		memcpy(w, p, n);
		w += n;
		p += n;
		while (*p == '/')
			p++;
	}
	*w = '\0';
	if (*p || !**rel || p[-1] == '/') {    /* trailing slash: the walk's */
		free(want);
		return NULL;
	}
	return want;
}

/* The lookup, and whether it ended where plain names lead: the result's
 * descriptor, or -1. */
static int lookup(int start, const char *from, const char *path,
		  struct stat *st, int *kid, int *root, char **where)
{
	char *want = NULL, *got = NULL;
	const char *rel;
	int fd = -1;
	if ((want = plain(from, path, &rel)) &&
	    (fd = openat(start, rel, O_PATH | O_NOFOLLOW | O_CLOEXEC)) >= 0 &&
	    (fd_stat_kid(fd, st, kid, root) < 0 || !(got = fd_path(fd)) ||
	     strcmp(got, want) != 0)) {
		close(fd);
		fd = -1;
	}
	free(want);
	if (fd >= 0)
		*where = got;
	else
		free(got);
	return fd;
}

/* 0 and out filled, or 1: not plain (or not found), for the walk. */
int quick_walk(struct request *r, const char *path, int how,
	       struct named *out)
{
	struct peer *p = &r->caller;
	struct stat st;
	char *where, *dir, *cwd = NULL;
	int kid, root;
	struct loc at;
	if (!p->cap_search || !p->cap_admin || stall_anywhere(r->b) ||
	    ((how & RES_MOUNTPOINT) && r->b->nasleep))
		return 1;          /* its last name may be asleep (expire.c) */
	bool abs = path[0] == '/';
	int start = abs ? p->root : peer_cwd(p);
	const char *from = abs ? peer_root(p) :
			   start < 0 ? NULL : (cwd = fd_path(start));
	int fd = from ? lookup(start, from, path, &st, &kid, &root, &where) : -1;
	free(cwd);
	if (fd < 0)
		return 1;
	int err = S_ISLNK(st.st_mode) && !(how & RES_NOFOLLOW) ? 1 :
		  fd_loc_kid(r->b, kid < 0 ? fd_mnt_id(fd) : kid, root,
			     where, &st, &at, &dir);
	free(where);
	if (err) {
		close(fd);
		return 1;
	}
	out->fd = fd;
	out->buf = dir;
	out->at = at;
	return 0;
}
