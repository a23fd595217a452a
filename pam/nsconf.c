/* nsconf.c: the module's configuration, in namespace.conf's columns
 * (man/pam_libshare.8):
 *
 *     DIRECTORY   INSTANCE   METHOD   [USERS]
 *
 * METHOD user binds INSTANCE followed by the user name on DIRECTORY,
 * tmpfs mounts a tmpfs there (INSTANCE: its options, or -), and slave,
 * shared and private say how the session's mounts at and under DIRECTORY
 * propagate (INSTANCE -).  USERS, as namespace.conf's list_of_uids: the
 * users (and @groups) the line leaves out, or with a leading ~ the only
 * ones it is for; none, or *: everybody.  $USER and $HOME stand for the
 * user's name and home in DIRECTORY and INSTANCE.
 *
 * The file decides whose session gets which directories, so it must be
 * root's alone: owned by root, written by nobody else, no symlink.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/stat.h>
#include <unistd.h>
#include <security/pam_ext.h>
#include "pamls.h"

static const char *const method_names[] = {
	[NSC_SLAVE] = "slave", [NSC_SHARED] = "shared",
	[NSC_PRIVATE] = "private", [NSC_TMPFS] = "tmpfs", [NSC_USER] = "user",
};

bool nsc_is_propagation(enum nsc_method m)
{
	return m == NSC_SLAVE || m == NSC_SHARED || m == NSC_PRIVATE;
}

static int method_of(const char *s)
{
	for (size_t i = 0; i < sizeof method_names / sizeof *method_names; i++)
		if (strcmp(s, method_names[i]) == 0)
			return (int)i;
	return -1;
}

/* s with $USER and $HOME replaced, or NULL when too long. */
static char *expand(const char *s, const struct nsc_user *u)
{
	char buf[PATH_MAX];
	size_t n = 0;
	while (*s) {
		const char *with = NULL;
		size_t skip = 1, len = 1;
		if (strncmp(s, "$USER", 5) == 0)
			with = u->name, skip = 5;
		else if (strncmp(s, "$HOME", 5) == 0)
			with = u->home, skip = 5;
		len = with ? strlen(with) : 1;
		if (n + len >= sizeof buf)
			return NULL;
		memcpy(buf + n, with ? with : s, len);
		n += len;
		s += skip;
	}
	buf[n] = '\0';
	return strdup(buf);
}

/* An absolute path (or one from $HOME) without "." or ".." among its
 * names: what the line names is what gets mounted, read the same way by
 * everyone.  Checked again once $HOME is filled in. */
static bool plain_path(const char *p)
{
	if (strcmp(p, "$HOME") == 0)
		return true;
	if (strncmp(p, "$HOME/", 6) == 0)
		p += 5;
	if (p[0] != '/')
		return false;
	for (const char *c = p; *c; c++) {
		if (c[0] != '/')
			continue;
		if ((c[1] == '.' && (c[2] == '/' || !c[2])) ||
		    (c[1] == '.' && c[2] == '.' && (c[3] == '/' || !c[3])))
			return false;
	}
	return true;
}

/* Whether one USERS item (a name, or @group) names u. */
static bool names_user(const char *item, const struct nsc_user *u)
{
	if (item[0] != '@')
		return strcmp(item, u->name) == 0;
	struct group *g = getgrnam(item + 1);
	for (int i = 0; g && i < u->ngroups; i++)
		if (u->groups[i] == g->gr_gid)
			return true;
	return false;
}

/* namespace.conf's rule: the list leaves its users out; "~list" is for
 * them alone. */
static bool applies(char *field, const struct nsc_user *u)
{
	bool only = false, named = false;
	char *save, *item;
	if (!field || strcmp(field, "*") == 0)
		return true;
	if (field[0] == '~')
		only = true, field++;
	for (item = strtok_r(field, ",", &save); item && !named;
	     item = strtok_r(NULL, ",", &save))
		named = names_user(item, u);
	return only ? named : !named;
}

/* Checks one line's fields; the message for a bad one, else NULL. */
static const char *bad_fields(char *f[4], int method)
{
	if (method < 0)
		return "METHOD must be user, tmpfs, slave, shared or private";
	if (!f[0] || !plain_path(f[0]))
		return "DIRECTORY must be an absolute path without . or ..";
	if (method == NSC_USER && !plain_path(f[1]))
		return "a user line's INSTANCE must be an absolute path";
	if (nsc_is_propagation(method) && strcmp(f[1], "-") != 0)
		return "a propagation line's INSTANCE must be -";
	return NULL;
}

/* One line: kept in c when it names u.  -1 for a bad line. */
static int parse_line(pam_handle_t *pamh, const char *path, int lineno,
		      char *text, const struct nsc_user *u, struct nsc *c)
{
	char *f[5] = { NULL }, *save;
	int n = 0, method;
	text[strcspn(text, "#\n")] = '\0';
	for (char *t = strtok_r(text, " \t", &save); t && n < 5;
	     t = strtok_r(NULL, " \t", &save))
		f[n++] = t;
	if (n == 0)
		return 0;
	method = n >= 3 ? method_of(f[2]) : -1;
	const char *why = n < 3 ? "fewer than three fields" :
			  n > 4 ? "more than four fields" : bad_fields(f, method);
	if (why) {
		pam_syslog(pamh, LOG_ERR, "%s:%d: %s", path, lineno, why);
		return -1;
	}
	if (!applies(f[3], u))
		return 0;
	struct nsc_line l = { .method = method, .lineno = lineno };
	void *v = realloc(c->v, (c->n + 1) * sizeof *c->v);
	if (v)
		c->v = v;
	l.dir = v ? expand(f[0], u) : NULL;
	if (l.dir && strcmp(f[1], "-") != 0)
		l.inst = expand(f[1], u);
	if (!l.dir || (strcmp(f[1], "-") != 0 && !l.inst)) {
		free(l.dir);
		pam_syslog(pamh, LOG_ERR, "%s:%d: too long, or out of memory",
			   path, lineno);
		return -1;
	}
	if (!plain_path(l.dir) || (l.inst && method == NSC_USER &&
				   !plain_path(l.inst))) {
		pam_syslog(pamh, LOG_ERR, "%s:%d: no absolute path once $HOME "
			   "is %s", path, lineno, u->home);
		free(l.dir);
		free(l.inst);
		return -1;
	}
	if (l.dir[1] && l.dir[strlen(l.dir) - 1] == '/')
		l.dir[strlen(l.dir) - 1] = '\0';
	c->v[c->n++] = l;
	return 0;
}

/* The file, opened only if it is root's alone. */
static FILE *open_conf(pam_handle_t *pamh, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	FILE *f;
	if (fd < 0) {
		pam_syslog(pamh, LOG_ERR, "cannot open %s: %m", path);
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		pam_syslog(pamh, LOG_ERR, "%s is not a file root alone may "
			   "write: refused", path);
		close(fd);
		return NULL;
	}
	if (!(f = fdopen(fd, "r")))
		close(fd);
	return f;
}

int nsc_load(pam_handle_t *pamh, const char *path, const struct nsc_user *u,
	     struct nsc *c)
{
	FILE *f = open_conf(pamh, path);
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0, err = 0;
	*c = (struct nsc){ 0 };
	if (!f)
		return -1;
	while (!err && getline(&line, &cap, f) >= 0)
		err = parse_line(pamh, path, ++lineno, line, u, c);
	if (!err && ferror(f)) {
		pam_syslog(pamh, LOG_ERR, "cannot read %s: %m", path);
		err = -1;
	}
	free(line);
	fclose(f);
	if (err)
		nsc_free(c);
	return err;
}

void nsc_free(struct nsc *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].dir);
		free(c->v[i].inst);
	}
	free(c->v);
	*c = (struct nsc){ 0 };
}
