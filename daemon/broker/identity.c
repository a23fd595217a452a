/* identity.c: who the caller is, from the kernel alone.
 *
 * SO_PEERCRED names the process that connected; /proc/<pid> gives its
 * credentials, capabilities, root and cwd.  A pid can be reused: a client
 * can connect, hand the connection to a child and exit, and wait for a
 * privileged process to get its pid.  So the process read must be the one
 * that holds the connection's other end, before and after the reading
 * (holds()): a pid cannot be reused twice in that time.
 *
 * Privilege is what the kernel recorded when the caller connected
 * (SO_PEERCRED: its effective uid then), combined with what /proc says
 * when the request is served; the lesser of the two counts.  /proc alone
 * would be read too late: a user can connect, send a request, then exec a
 * set-user-ID program that inherits the connection (su waiting for a
 * password), and by the time the broker reads /proc/PID/status the same
 * pid holds the socket with euid 0 and every capability.  So a caller that
 * was not root at connect has no capability here, whatever it has become,
 * and one that gave up root since connecting has what it has now.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker.h"

static bool cap(unsigned long long caps, int bit)
{
	return caps >> bit & 1;
}

/* Whether pid is in the broker's user namespace (kernels without user
 * namespaces have one).  The broker's own is read once: it never moves. */
static bool same_userns(pid_t pid)
{
	static struct stat mine;
	static int known = -1;  /* 1: mine read; 0: no namespaces to read */
	char path[64];
	struct stat theirs;
	if (known < 0)
		known = stat("/proc/self/ns/user", &mine) == 0;
	if (!known)
		return true;
	snprintf(path, sizeof path, "/proc/%d/ns/user", (int)pid);
	return stat(path, &theirs) == 0 && mine.st_ino == theirs.st_ino &&
	       mine.st_dev == theirs.st_dev;
}

/* /proc/<pid>/status whole, in one read where it fits (it always does but
 * for a process in thousands of groups): NUL-terminated, malloc'ed. */
static char *read_small(const char *path)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap), *more;
	ssize_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
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

/* Credentials as permission checks see them now (fsuid, fsgid, groups,
 * caps), bounded by those of the connect: p->uid and p->gid hold
 * SO_PEERCRED's on entry. */
static int read_status(struct peer *p)
{
	char path[64], *text, *line, *next;
	unsigned long long caps = 0;
	unsigned uid = (unsigned)-1, gid = (unsigned)-1;
	snprintf(path, sizeof path, "/proc/%d/status", (int)p->pid);
	if (!(text = read_small(path)))
		return -ESRCH;
	for (line = text; *line; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		unsigned r, e, s, fs;
		if (!strchr("UGC", line[0]))
			continue;      /* sscanf() is dear: five lines of fifty */
		if (sscanf(line, "Uid: %u %u %u %u", &r, &e, &s, &fs) == 4)
			uid = fs;
		else if (sscanf(line, "Gid: %u %u %u %u", &r, &e, &s, &fs) == 4)
			gid = fs;
		else if (sscanf(line, "CapEff: %llx", &caps) == 1)
			continue;
		else if (strncmp(line, "Groups:", 7) == 0) {
			char *q = line + 7, *end;
			p->ngroups = 0;
			for (unsigned long g; p->ngroups < 64 &&
			     (g = strtoul(q, &end, 10), end != q); q = end)
				p->groups[p->ngroups++] = (gid_t)g;
		}
	}
	free(text);
	/* Root at connect: what it is now (it may have dropped privilege
	 * since).  Not root at connect: that, and no capability at all. */
	bool was_root = p->uid == 0;
	if (was_root) {
		p->uid = uid;
		p->gid = gid;
	} else if (uid != p->uid) {
		p->ngroups = 0;    /* /proc's groups are someone else's now */
	}
	/* Capabilities count only in the broker's user namespace: in one of
	 * its own (unshare -U -r, open to every user) a process has them all
	 * and no power over the host's mounts, which the kernel knows. */
	bool home = was_root && same_userns(p->pid);
	p->cap_admin = home && cap(caps, 21);      /* CAP_SYS_ADMIN */
	p->cap_search = home && (cap(caps, 1) || cap(caps, 2));
	return 0;
}

/* tid: the calling thread, which may have a root and cwd of its own; any
 * thread of the process (which could chdir all of them anyway), else the
 * process's. */
static int peer_read(struct peer *p, pid_t pid, pid_t tid, uid_t uid,
		     gid_t gid)
{
	char dir[64], path[96];
	struct stat st;
	memset(p, 0, sizeof *p);
	p->pid = pid;
	p->uid = uid;
	p->gid = gid;
	p->root = p->cwd = -1;
	snprintf(dir, sizeof dir, "/proc/%d/task/%d", (int)pid, (int)tid);
	if (tid <= 0 || stat(dir, &st) < 0)
		snprintf(dir, sizeof dir, "/proc/%d", (int)pid);
	snprintf(path, sizeof path, "%s/root", dir);
	p->root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	snprintf(path, sizeof path, "%s/cwd", dir);
	p->cwd = open(path, O_PATH | O_CLOEXEC);
	if (p->root < 0 || p->cwd < 0 || read_status(p) < 0) {
		peer_close(p);
		return -ESRCH;
	}
	return 0;
}

void peer_close(struct peer *p)
{
	if (p->root >= 0)
		close(p->root);
	if (p->cwd >= 0)
		close(p->cwd);
	p->root = p->cwd = -1;
}


/* The inode of the other end of a connected AF_UNIX socket, from the
 * kernel's socket diagnostics (Linux 3.3); 0 when they cannot tell. */
static ino_t peer_inode(int sock)
{
	struct stat st;
	struct {
		struct nlmsghdr nh;
		struct unix_diag_req r;
	} q = { { sizeof q, SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST, 1, 0 },
		{ .sdiag_family = AF_UNIX, .udiag_states = ~0u,
		  .udiag_show = UDIAG_SHOW_PEER,
		  .udiag_cookie = { ~0u, ~0u } } };
	long buf[1024];
	ino_t peer = 0;
	if (fstat(sock, &st) < 0)
		return 0;
	q.r.udiag_ino = (unsigned)st.st_ino;
	int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return 0;
	ssize_t n = send(nl, &q, sizeof q, 0) == sizeof q ?
		    recv(nl, buf, sizeof buf, 0) : -1;
	close(nl);
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	if (n < 0 || !NLMSG_OK(h, (size_t)n) || h->nlmsg_type != SOCK_DIAG_BY_FAMILY)
		return 0;
	struct unix_diag_msg *m = NLMSG_DATA(h);
	int len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof *m));
	for (struct rtattr *a = (struct rtattr *)(m + 1); RTA_OK(a, len);
	     a = RTA_NEXT(a, len))
		if (a->rta_type == UNIX_DIAG_PEER)
			peer = *(unsigned *)RTA_DATA(a);
	return peer;
}

/* Whether process pid holds the socket inode ino at its descriptor fd1 -
 * 1, as the client says it does; a client that does not say (fd1 0) is
 * looked for among its first SCAN_MAX descriptors only, so that a caller
 * with thousands of them cannot make every other caller wait. */
enum { SCAN_MAX = 1024 };

static bool holds(pid_t pid, ino_t ino, uint32_t fd1)
{
	char path[64], link[64], want[40];
	bool found = false;
	int seen = 0;
	snprintf(want, sizeof want, "socket:[%lu]", (unsigned long)ino);
	if (fd1) {
		snprintf(path, sizeof path, "/proc/%d/fd/%u", (int)pid, fd1 - 1);
		ssize_t n = readlink(path, link, sizeof link - 1);
		return n > 0 && (link[n] = '\0', strcmp(link, want) == 0);
	}
	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	for (struct dirent *e; d && !found && seen++ < SCAN_MAX &&
	     (e = readdir(d)); ) {
		char fd[330];
		snprintf(fd, sizeof fd, "%s/%s", path, e->d_name);
		ssize_t n = readlink(fd, link, sizeof link - 1);
		if (n > 0) {
			link[n] = '\0';
			found = strcmp(link, want) == 0;
		}
	}
	if (d)
		closedir(d);
	return found;
}

/* Reads who is at the other end of sock: -ESRCH when the process that
 * connected is gone or pid now names another process. */
int peer_identify(struct peer *p, int sock, const struct ucred *cred,
		  pid_t tid, uint32_t fd1)
{
	ino_t end = peer_inode(sock);
	if (end && !holds(cred->pid, end, fd1))
		return -ESRCH;
	int err = peer_read(p, cred->pid, tid, cred->uid, cred->gid);
	if (!err && end && !holds(cred->pid, end, fd1)) {
		peer_close(p);
		err = -ESRCH;
	}
	return err;
}
