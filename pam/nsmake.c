/* nsmake.c: the session's namespace, made as unshare(1) and mount(8)
 * would make it through the shim: unshare(CLONE_NEWNS) gives the
 * process a copy of its mount tree (the broker's, docs/design.md), then
 * each mount of the copy gets the propagation its line says (slave by
 * default: the system's later mounts reach the session, the session's
 * reach nobody), then the instances are mounted, in the file's order.
 *
 * The calls go to the shim, never to the kernel: a kernel with mount
 * namespaces would make a namespace the broker does not know, and one
 * without them would refuse.  So the module uses the process's shim when
 * it has one, and otherwise loads the shim itself for its own calls.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <security/pam_ext.h>
#include "pamls.h"

/* Whether the object at file is a shim: its name is libshare.so
 * wherever a jail keeps it. */
static bool is_shim(const char *file)
{
	const char *base = file ? strrchr(file, '/') : NULL;
	return base && strcmp(base + 1, "libshare.so") == 0;
}

int shimcalls_get(pam_handle_t *pamh, const char *path, struct shimcalls *s)
{
	void *h = RTLD_DEFAULT, *f = dlsym(RTLD_DEFAULT, "unshare");
	Dl_info di;
	/* Loaded once and kept: the shim is no library to unload. */
	if (!f || !dladdr(f, &di) || !is_shim(di.dli_fname)) {
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
		if (!h) {
			pam_syslog(pamh, LOG_ERR, "cannot load the shim: %s",
				   dlerror());
			return -1;
		}
	}
	*(void **)&s->unshare = dlsym(h, "unshare");
	*(void **)&s->setns = dlsym(h, "setns");
	*(void **)&s->mount = dlsym(h, "mount");
	*(void **)&s->open = dlsym(h, "open");
	*(void **)&s->fopen = dlsym(h, "fopen");
	if (!s->unshare || !s->setns || !s->mount || !s->open || !s->fopen) {
		pam_syslog(pamh, LOG_ERR, "%s lacks the shim's calls", path);
		return -1;
	}
	return 0;
}

/* A token of the namespace the process is in, to come back to, or -1
 * when no broker answered: the shim then hands the kernel's own file
 * (or ENOENT without /proc), and a token is a socket. */
int ns_origin(const struct shimcalls *s)
{
	struct stat st;
	int fd = s->open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The propagation line for a mount at mp: the longest whose directory
 * holds it; "/", slave, when none does. */
static enum nsc_method propagation_of(const struct nsc *c, const char *mp)
{
	enum nsc_method m = NSC_SLAVE;
	size_t best = 0;
	for (size_t i = 0; i < c->n; i++) {
		const char *d = c->v[i].dir;
		size_t n = strcmp(d, "/") == 0 ? 0 : strlen(d);
		if (!nsc_is_propagation(c->v[i].method) || n < best ||
		    strncmp(mp, d, n) != 0 || (mp[n] && mp[n] != '/'))
			continue;
		best = n;
		m = c->v[i].method;
	}
	return m;
}

/* mountinfo's mount point field, its \ooo escapes undone, in place. */
static char *mountpoint_of(char *line)
{
	char *save, *f = strtok_r(line, " ", &save), *r, *w;
	for (int i = 0; f && i < 4; i++)
		f = strtok_r(NULL, " ", &save);
	for (r = w = f; f && *r; w++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] && r[3]) {
			*w = (char)((r[1] - '0') << 6 | (r[2] - '0') << 3 |
				    (r[3] - '0'));
			r += 4;
		} else {
			*w = *r++;
		}
	}
	if (f)
		*w = '\0';
	return f;
}

/* Whether one call for the whole tree does: no line but "/" says how. */
static bool one_type(const struct nsc *c)
{
	for (size_t i = 0; i < c->n; i++)
		if (nsc_is_propagation(c->v[i].method) &&
		    strcmp(c->v[i].dir, "/") != 0)
			return false;
	return true;
}

static unsigned long ms_flag(enum nsc_method m)
{
	return m == NSC_SLAVE ? MS_SLAVE : m == NSC_PRIVATE ? MS_PRIVATE : 0;
}

/* Each mount of the copy as its line says, one at a time: a shared line
 * inside a slave tree keeps its mounts peers of the system's, which a
 * recursive change of "/" would not.  A mount covered by another cannot
 * be named; it keeps the copy's propagation (nothing in the session can
 * mount on it). */
static int set_propagation(pam_handle_t *pamh, const struct shimcalls *s,
			   const struct nsc *c)
{
	char *line = NULL, *mp;
	size_t cap = 0;
	int err = 0;
	unsigned long fl = ms_flag(propagation_of(c, "/"));
	if (one_type(c)) {
		if (!fl || s->mount("none", "/", NULL, fl | MS_REC, NULL) == 0)
			return 0;
		pam_syslog(pamh, LOG_ERR, "mount --make-r%s /: %m",
			   fl == MS_SLAVE ? "slave" : "private");
		return -1;
	}
	FILE *f = s->fopen("/proc/self/mountinfo", "r");
	if (!f) {
		pam_syslog(pamh, LOG_ERR, "the session's mount table: %m");
		return -1;
	}
	while (!err && getline(&line, &cap, f) > 0) {
		if (!(mp = mountpoint_of(line)) ||
		    !(fl = ms_flag(propagation_of(c, mp))))
			continue;
		if (s->mount("none", mp, NULL, fl, NULL) < 0 &&
		    errno != EINVAL && errno != ENOENT) {
			pam_syslog(pamh, LOG_ERR, "propagation of %s: %m", mp);
			err = -1;
		}
	}
	free(line);
	fclose(f);
	return err;
}

/* One instance line: a tmpfs, or the user's directory bound. */
static int mount_instance(pam_handle_t *pamh, const struct shimcalls *s,
			  const struct nsc_line *l, const struct nsc_user *u)
{
	char inst[PATH_MAX];
	int r;
	if (safe_dir(pamh, l->dir, u->uid) < 0)
		return -1;
	if (l->method == NSC_TMPFS) {
		r = s->mount("pam_libshare", l->dir, "tmpfs", MS_NOSUID | MS_NODEV,
			     l->inst ? l->inst : "mode=1777");
	} else {
		if ((size_t)snprintf(inst, sizeof inst, "%s%s", l->inst,
				     u->name) >= sizeof inst ||
		    safe_instance(pamh, inst, u) < 0)
			return -1;
		r = s->mount(inst, l->dir, NULL, MS_BIND, NULL);
	}
	if (r < 0)
		pam_syslog(pamh, LOG_ERR, "line %d: mount on %s: %m",
			   l->lineno, l->dir);
	return r < 0 ? -1 : 0;
}

/* 0, or -1 when no namespace was made, or -2 when one was entered and
 * must be left. */
int ns_make(pam_handle_t *pamh, const struct shimcalls *s,
	    const struct nsc *c, const struct nsc_user *u, bool debug)
{
	if (s->unshare(CLONE_NEWNS) < 0) {
		pam_syslog(pamh, LOG_ERR, "unshare(CLONE_NEWNS) for %s: %m%s",
			   u->name, errno == EPERM ? " (the session must be "
			   "opened by root)" : errno == ENOSYS ? " (the broker "
			   "stopped answering)" : "");
		return -1;
	}
	if (set_propagation(pamh, s, c) < 0)
		return -2;
	for (size_t i = 0; i < c->n; i++) {
		if (nsc_is_propagation(c->v[i].method))
			continue;
		if (mount_instance(pamh, s, &c->v[i], u) < 0)
			return -2;
		if (debug)
			pam_syslog(pamh, LOG_DEBUG, "line %d: %s's instance on "
				   "%s", c->v[i].lineno, u->name, c->v[i].dir);
	}
	return 0;
}
