/* holds.c: whether a process holds a connection's other end (identity.c
 * proves each caller so): the kernel's socket diagnostics name the
 * inode of the other end of a connection, and the process's descriptors
 * name the sockets it holds.
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker.h"
#include "resolve/resolve.h"

/* The broker's socket to the kernel's socket diagnostics, kept: one
 * query at a time (diag_lock: the serving threads, door/loop.c, share
 * it), each answered before the next (sequence numbers tell a late
 * answer from the one awaited). */
static pthread_mutex_t diag_lock = PTHREAD_MUTEX_INITIALIZER;

static int diag_socket(void)
{
	static int nl = -1;
	if (nl < 0)
		nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
			    NETLINK_SOCK_DIAG);
	return nl;
}

/* The inode of the other end of the connected AF_UNIX socket of inode
 * ino, from the kernel's socket diagnostics (Linux 3.3); 0 when they
 * cannot tell.  Under diag_lock. */
static ino_t diag_peer(ino_t ino)
{
	static unsigned seq;
	struct {
		struct nlmsghdr nh;
		struct unix_diag_req r;
	} q = { { sizeof q, SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST, ++seq, 0 },
		{ .sdiag_family = AF_UNIX, .udiag_states = ~0u,
		  .udiag_show = UDIAG_SHOW_PEER,
		  .udiag_cookie = { ~0u, ~0u } } };
	long buf[1024];
	ino_t peer = 0;
	q.r.udiag_ino = (unsigned)ino;
	int nl = diag_socket();
	ssize_t n = nl < 0 || send(nl, &q, sizeof q, 0) != sizeof q ? -1 : 0;
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	while (n >= 0 && (n = recv(nl, buf, sizeof buf, MSG_DONTWAIT)) >= 0 &&
	       NLMSG_OK(h, (size_t)n) && h->nlmsg_seq != q.nh.nlmsg_seq)
		;              /* an answer to a query given up on */
	if (n < 0 || !NLMSG_OK(h, (size_t)n) ||
	    h->nlmsg_type != SOCK_DIAG_BY_FAMILY)
		return 0;
	struct unix_diag_msg *m = NLMSG_DATA(h);
	int len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof *m));
	for (struct rtattr *a = (struct rtattr *)(m + 1); RTA_OK(a, len);
	     a = RTA_NEXT(a, len))
		if (a->rta_type == UNIX_DIAG_PEER)
			peer = *(unsigned *)RTA_DATA(a);
	return peer;
}

ino_t peer_inode(int sock)
{
	struct stat st;
	ino_t peer;
	if (fstat(sock, &st) < 0)
		return 0;
	pthread_mutex_lock(&diag_lock);
	peer = diag_peer(st.st_ino);
	pthread_mutex_unlock(&diag_lock);
	return peer;
}

/* Whether the process of /proc directory proc holds the socket inode ino
 * at its descriptor fd1 - 1, as the client says it does; a client that
 * does not say (fd1 0) is looked for among its first SCAN_MAX descriptors
 * only, so that a caller with thousands of them cannot make every other
 * caller wait. */
enum { SCAN_MAX = 1024 };

bool peer_holds(int proc, ino_t ino, uint32_t fd1)
{
	char path[64], link[64], want[40];
	bool found = false;
	int seen = 0;
	snprintf(want, sizeof want, "socket:[%lu]", (unsigned long)ino);
	if (fd1) {
		snprintf(path, sizeof path, "fd/%u", fd1 - 1);
		ssize_t n = readlinkat(proc, path, link, sizeof link - 1);
		return n > 0 && (link[n] = '\0', strcmp(link, want) == 0);
	}
	int dir = openat(proc, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dir < 0 ? NULL : fdopendir(dir);
	if (!d && dir >= 0)
		close(dir);
	for (struct dirent *e; d && !found && seen++ < SCAN_MAX &&
	     (e = readdir(d)); ) {
		ssize_t n = readlinkat(dir, e->d_name, link, sizeof link - 1);
		if (n > 0) {
			link[n] = '\0';
			found = strcmp(link, want) == 0;
		}
	}
	if (d)
		closedir(d);
	return found;
}
