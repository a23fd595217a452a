/* identity.c: who the caller is, from the kernel alone.
 *
 * SO_PEERCRED names the process that connected; /proc/<pid> gives its
 * credentials, capabilities, root and cwd.  A pid can be reused: a client
 * can connect, hand the connection to a child and exit, and wait for a
 * privileged process to get its pid.  So the process read must be the one
 * that holds the connection's other end, before and after the reading
 * (holds.c): a pid cannot be reused twice in that time.
 *
 * Privilege is what the kernel recorded when the caller sent its request
 * (the message's SCM_CREDENTIALS: a uid the kernel checked was one of the
 * sender's then; without them, SO_PEERCRED: its effective uid at
 * connect), combined with what /proc says when the request is served; the
 * lesser of the two counts.  /proc alone would be read too late: a user
 * can send a request, then exec a set-user-ID program that inherits the
 * connection (su waiting for a password), and by the time the broker
 * reads /proc/PID/status the same pid holds the socket with euid 0 and
 * every capability.  So a caller that was not root when it sent has no
 * capability here, whatever it has become, and one that gave up root
 * since has what it has now.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "broker.h"
#include "base/base.h"
#include "resolve/resolve.h"

static bool cap(unsigned long long caps, int bit)
{
	return caps >> bit & 1;
}

/* Whether the process of /proc directory proc is in the broker's user
 * namespace (kernels without user namespaces have one).  The broker's own
 * is read once: it never moves.  By the link's text, "user:[INODE]" (one
 * nsfs for all namespaces: the inode names one), which the kernel makes
 * without the dentry a stat of the namespace costs (ns_get_name(), not
 * ns_get_path(): about 3.5 us against 9 here); the same ptrace check
 * guards both. */
static bool same_userns(int proc)
{
	/* each serving thread's (door/loop.c) */
	static __thread char mine[64];
	static __thread int known = -1;  /* 1: read; 0: no namespaces */
	char theirs[64];
	ssize_t n;
	if (known < 0) {
		n = readlink("/proc/self/ns/user", mine, sizeof mine - 1);
		known = n > 0;
		mine[n > 0 ? n : 0] = '\0';
	}
	if (!known)
		return true;
	n = readlinkat(proc, "ns/user", theirs, sizeof theirs - 1);
	if (n <= 0)
		return false;
	theirs[n] = '\0';
	return strcmp(theirs, mine) == 0;
}

/* /proc/<pid>/status whole, in one read where it fits (it always does but
 * for a process in thousands of groups): NUL-terminated, malloc'ed. */
static char *read_small(int dir, const char *name)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap), *more;
	ssize_t n = 0;
	int fd = openat(dir, name, O_RDONLY | O_CLOEXEC);
	while (fd >= 0 && buf && (n = read(fd, buf + len, cap - len - 1)) > 0 &&
	       (len += (size_t)n) == cap - 1 && (more = realloc(buf, cap *= 2)))
		buf = more;
	if (fd >= 0)
		close(fd);
	if (fd < 0 || n < 0) {
		free(buf);
		return NULL;
	}
	if (buf)
		buf[len] = '\0';
	return buf;
}

/* Credentials as permission checks see them now (fsuid, fsgid, groups),
 * bounded by those of the connect: p->uid and p->gid hold SO_PEERCRED's
 * on entry.  Root at connect: what it is now (it may have dropped
 * privilege since).  Not root at connect: that. */
static int read_status(struct peer *p, int proc)
{
	char *text, *line, *next;
	unsigned uid = (unsigned)-1, gid = (unsigned)-1;
	if (!(text = read_small(proc, "status")))
		return -ESRCH;
	for (line = text; *line; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		unsigned r, e, s, fs;
		if (!strchr("UG", line[0]))
			continue;      /* sscanf() is dear: 5 lines of 50 */
		if (sscanf(line, "Uid: %u %u %u %u", &r, &e, &s, &fs) == 4)
			uid = fs;
		else if (sscanf(line, "Gid: %u %u %u %u", &r, &e, &s, &fs) == 4)
			gid = fs;
		else if (strncmp(line, "Groups:", 7) == 0) {
			char *q = line + 7, *end;
			p->ngroups = 0;
			for (unsigned long g; p->ngroups < 64 &&
			     (g = strtoul(q, &end, 10), end != q); q = end)
				p->groups[p->ngroups++] = (gid_t)g;
		}
	}
	free(text);
	if (p->uid == 0) {
		p->uid = uid;
		p->gid = gid;
	} else if (uid != p->uid) {
		p->ngroups = 0;    /* /proc's groups are someone else's now */
	}
	return 0;
}

/* The caller's uid, gid and groups, read at their first use: a caller
 * that was root at connect is mostly served on its capabilities alone
 * (status is the dearest file of /proc to read).  It is read through the
 * descriptor of /proc/<pid> that identification checked; a process gone
 * meanwhile is no one (uid and gid -1, no groups). */
void peer_creds(struct peer *p)
{
	if (!p->creds_due)
		return;
	p->creds_due = false;
	if (p->proc < 0 || read_status(p, p->proc) < 0) {
		p->uid = (uid_t)-1;
		p->gid = (gid_t)-1;
		p->ngroups = 0;
	}
}

uid_t peer_uid(struct peer *p)
{
	peer_creds(p);
	return p->uid;
}

/* The effective capabilities of pid as the kernel has them now (capget:
 * the CapEff of /proc/<pid>/status, without the rest of that file); none
 * when it cannot say. */
static unsigned long long cap_effective(pid_t pid)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3,
					      (int)pid };
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		return 0;
	return d[0].effective | (unsigned long long)d[1].effective << 32;
}

/* Capabilities: none for a caller that was not root at connect, whatever
 * it has become; and they count only in the broker's user namespace: in
 * one of its own (unshare -U -r, open to every user) a process has them
 * all and no power over the host's mounts, which the kernel knows. */
static int read_caps(struct peer *p, int proc)
{
	if (p->uid != 0)
		return read_status(p, proc);
	unsigned long long caps = cap_effective(p->pid);
	bool home = same_userns(proc);
	p->cap_admin = home && cap(caps, 21);      /* CAP_SYS_ADMIN */
	p->cap_search = home && (cap(caps, 1) || cap(caps, 2));
	p->creds_due = true;
	return 0;
}

/* name in the process's /proc directory, or in its thread's (task "").
 */
static int open_in(int proc, const char *task, const char *name, int how)
{
	char path[64];
	snprintf(path, sizeof path, "%s%s", task, name);
	return openat(proc, path, O_PATH | O_CLOEXEC | how);
}

/* tid: the calling thread, which may have a root and cwd of its own; any
 * thread of the process (which could chdir all of them anyway), else the
 * process's.  proc: the process's /proc directory. */
static int peer_read(struct peer *p, int proc, pid_t pid, pid_t tid,
		     uid_t uid, gid_t gid)
{
	char *task = p->task;
	memset(p, 0, sizeof *p);
	p->pid = pid;
	p->uid = uid;
	p->gid = gid;
	p->root = p->cwd = p->proc = -1;
	if (tid > 0 && tid != pid) {
		snprintf(task, sizeof p->task, "task/%d/", (int)tid);
		if ((p->root = open_in(proc, task, "root", O_DIRECTORY)) < 0)
			task[0] = '\0';
	}
	if (p->root < 0)
		p->root = open_in(proc, "", "root", O_DIRECTORY);
	if (p->root < 0 || read_caps(p, proc) < 0) {
		peer_close(p);
		return -ESRCH;
	}
	return 0;
}

/* The caller's cwd (its thread's, as its root), opened at its first use:
 * most paths are absolute.  -1 when the process is gone. */
int peer_cwd(struct peer *p)
{
	if (p->cwd < 0 && p->proc >= 0)
		p->cwd = open_in(p->proc, p->task, "cwd", 0);
	return p->cwd;
}

void peer_close(struct peer *p)
{
	if (p->root >= 0)
		close(p->root);
	if (p->cwd >= 0)
		close(p->cwd);
	p->root = p->cwd = p->proc = -1;  /* proc: the connection's */
	free(p->root_path);
	p->root_path = NULL;
}

/* The broker's path of the caller's root, read at its first use in the
 * request: every check of one request sees the same. */
const char *peer_root(struct peer *p)
{
	if (!p->root_path && p->root >= 0)
		p->root_path = fd_path(p->root);
	return p->root_path;
}

void peer_seen_forget(struct peer_seen *s)
{
	if (s->proc >= 0)
		close(s->proc);
	s->proc = -1;
	s->pid = 0;
}

/* The process of /proc directory proc, pid, proved the holder of sock's
 * other end: read before and after its reading (a pid cannot be reused
 * twice in that time). */
static int identify_anew(struct peer *p, int sock, const struct ucred *cred,
			 pid_t tid, uint32_t fd1, struct peer_seen *seen)
{
	char path[32];
	if (!seen->asked) {
		seen->end = peer_inode(sock);
		seen->asked = true;
	}
	snprintf(path, sizeof path, "/proc/%d", (int)cred->pid);
	int proc = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC), err;
	if (proc < 0 || (seen->end && !peer_holds(proc, seen->end, fd1)))
		err = -ESRCH;
	else
		err = peer_read(p, proc, cred->pid, tid, cred->uid, cred->gid);
	if (!err && seen->end && !peer_holds(proc, seen->end, fd1)) {
		peer_close(p);
		err = -ESRCH;
	}
	if (err) {
		if (proc >= 0)
			close(proc);
		return err;
	}
	seen->pid = cred->pid;
	seen->proc = proc;
	return 0;
}

/* Reads who is at the other end of sock: -ESRCH when the process that
 * sent the request is gone or pid now names another process.  Everything
 * is read through one descriptor of /proc/<pid>, which stays the process
 * it was opened on: a pid reused meanwhile reads as gone, not as the new
 * one.  A connection that lasts (the shim keeps one) is proved once per
 * process that sends on it: seen keeps that process's /proc directory,
 * and while it is alive it is the same process.  What can change between
 * two requests is read again each time: root, cwd, capabilities, user
 * namespace (peer_read()), and the credentials, which come with each
 * message (cred). */
int peer_identify(struct peer *p, int sock, const struct ucred *cred,
		  pid_t tid, uint32_t fd1, struct peer_seen *seen)
{
	int err = -ESRCH;
	if (seen->proc >= 0 && seen->pid == cred->pid)
		err = peer_read(p, seen->proc, cred->pid, tid, cred->uid,
				cred->gid);
	if (err) {
		peer_seen_forget(seen);
		err = identify_anew(p, sock, cred, tid, fd1, seen);
	}
	if (!err)
		p->proc = seen->proc;  /* peer_creds() reads through it; the
					  connection's, not closed with p */
	return err;
}
