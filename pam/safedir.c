/* safedir.c: the directories the module mounts on and binds from.
 *
 * The module runs as root and mounts where a line says, $HOME and $USER
 * filled in.  A user who could swap a directory on that path for a
 * symlink (to /etc, say) would have a tmpfs of 1777 mounted over /etc in
 * the session, and a set-user-ID program there would read the user's
 * passwd.  So the path is walked one name at a time, no symlink
 * followed, and every directory on it must be one only root can change
 * the names in: owned by root and written by nobody else, or sticky (as
 * /tmp) with the next name root's too.  The last directory may be the
 * user's own (a home) when its parent is root's alone: the user then
 * owns what is mounted on, never where it is.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/stat.h>
#include <unistd.h>
#include <security/pam_ext.h>
#include "pamls.h"

/* Whether child, met in dir, is a step nobody but root (or, for the
 * last one, owner) can move: see the header. */
static bool step_ok(const struct stat *dir, const struct stat *child,
		    uid_t owner, bool last)
{
	bool others_write = dir->st_mode & (S_IWGRP | S_IWOTH);
	if (dir->st_uid != 0)
		return false;
	if (others_write && (!(dir->st_mode & S_ISVTX) || child->st_uid != 0))
		return false;
	return child->st_uid == 0 || (last && child->st_uid == owner);
}

/* An O_PATH descriptor of path, walked as the header says, or -1. */
static int walk(pam_handle_t *pamh, const char *path, uid_t owner)
{
	char buf[PATH_MAX], *save, *name, *next;
	struct stat dir, st;
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), sub;
	if (strlen(path) >= sizeof buf || fd < 0 || fstat(fd, &dir) < 0) {
		pam_syslog(pamh, LOG_ERR, "%s: %m", path);
		goto fail;
	}
	strcpy(buf, path);
	for (name = strtok_r(buf, "/", &save); name; name = next) {
		next = strtok_r(NULL, "/", &save);
		sub = openat(fd, name, O_PATH | O_NOFOLLOW | O_DIRECTORY |
			     O_CLOEXEC);
		if (sub < 0 || fstat(sub, &st) < 0) {
			pam_syslog(pamh, LOG_ERR, "%s: %s: %s", path, name,
				   errno == ENOTDIR ? "not a directory (or a "
				   "symlink)" : strerror(errno));
			goto fail;
		}
		close(fd);
		fd = sub;
		if (!step_ok(&dir, &st, owner, !next)) {
			pam_syslog(pamh, LOG_ERR, "%s: %s is not root's alone, "
				   "so a user could swap what the path leads "
				   "to: refused", path, name);
			goto fail;
		}
		dir = st;
	}
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

/* A directory to mount on: root's, or owner's as the last name. */
int safe_dir(pam_handle_t *pamh, const char *path, uid_t owner)
{
	int fd = walk(pamh, path, owner);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* The user's instance directory at path: made (0700, the user's) when
 * missing, in a parent only root can change; one already there must be
 * a directory of the user's. */
int safe_instance(pam_handle_t *pamh, const char *path,
		  const struct nsc_user *u)
{
	char parent[PATH_MAX];
	const char *base = strrchr(path, '/') + 1;
	struct stat st;
	int pfd, err = -1;
	if (!*base || (size_t)(base - path) >= sizeof parent) {
		pam_syslog(pamh, LOG_ERR, "%s: no instance name", path);
		return -1;
	}
	memcpy(parent, path, (size_t)(base - path));
	parent[base - path] = '\0';
	if ((pfd = walk(pamh, parent, 0)) < 0)
		return -1;
	if (mkdirat(pfd, base, 0700) == 0 &&
	    fchownat(pfd, base, u->uid, u->gid, AT_SYMLINK_NOFOLLOW) < 0)
		pam_syslog(pamh, LOG_ERR, "%s: chown: %m", path);
	else if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		pam_syslog(pamh, LOG_ERR, "%s: %m", path);
	else if (!S_ISDIR(st.st_mode) || st.st_uid != u->uid)
		pam_syslog(pamh, LOG_ERR, "%s is not a directory of %s's: "
			   "refused", path, u->name);
	else
		err = 0;
	close(pfd);
	return err;
}
