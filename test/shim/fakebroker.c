/* fakebroker: a stand-in for sharebrokerd in the shim's tests
 * (the .bats files in test/shim/), which records what the shim sends and
 * answers by rule, so that the shim can be tested apart from the broker.
 *
 * usage: fakebroker ADDRESS LOG
 *
 * Listens on ADDRESS ("@name": abstract, else a path), then forks: the
 * parent prints the server's pid and exits, so that `pid=$(fakebroker ..)`
 * returns once clients can connect.  The server takes one connection at a
 * time, reads one request, appends one line to LOG and answers, until
 * SIGTERM (default action) ends it.  Log lines:
 *
 *   OP ARG F0 F1 F2 F3   a valid request: the op's name, the argument in
 *                        hex, each field, "-" when absent; bytes that are
 *                        not printable ASCII, and space and backslash, as
 *                        \ooo (as in mountinfo)
 *   MALFORMED why        a request sharebrokerd would reject (answered
 *                        EINVAL)
 *   EMPTY                a connection closed without a request
 *
 * The answer depends on the last component of field 1 (the target):
 * EPERM, ENOENT, EBUSY answer that errno; BADMAGIC, BADOP, BADLEN,
 * BADERRNO, SHORT send a malformed reply of that kind; HANGUP closes
 * without a reply; TEXT answers 0 followed by text.  Anything else, and
 * STATUS, answers 0 (STATUS with the text "fake").  MOUNTTABLE requests
 * are answered ENOSYS and not logged: the shim then opens the real file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include "libshare_proto.h"

static const char *const op_names[] = {
	[LS_OP_MOUNT] = "MOUNT", [LS_OP_UMOUNT] = "UMOUNT",
	[LS_OP_PIVOT_ROOT] = "PIVOT_ROOT", [LS_OP_CHROOT] = "CHROOT",
	[LS_OP_STATUS] = "STATUS", [LS_OP_STOP] = "STOP",
	[LS_OP_JAILS] = "JAILS",
};

static char msg[LS_REQUEST_MAX + 1];

static int listen_on(const char *addr)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(addr);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || n >= sizeof sa.sun_path)
		return -1;
	memcpy(sa.sun_path, addr, n);
	if (addr[0] == '@')
		sa.sun_path[0] = '\0';
	else
		n++;
	if (bind(fd, (struct sockaddr *)&sa,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)) < 0 ||
	    listen(fd, 128) < 0)
		return -1;
	return fd;
}

/* One field, escaped, into out (which has room for 4 bytes per byte). */
static size_t escape(char *out, const char *f, uint32_t len)
{
	size_t o = 0;
	if (len == LS_ABSENT) {
		out[o++] = '-';
		return o;
	}
	for (uint32_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)f[i];
		if (c > ' ' && c < 0x7f && c != '\\')
			out[o++] = (char)c;
		else
			o += (size_t)sprintf(out + o, "\\%03o", c);
	}
	return o;
}

/* Checks a request as sharebrokerd's server.c does; NULL when valid. */
static const char *check(size_t n, const char *field[LS_NFIELDS])
{
	const struct ls_request *r = (const void *)msg;
	size_t off = sizeof *r;
	if (n < sizeof *r)
		return "short";
	if (n > LS_REQUEST_MAX)
		return "long";
	if (r->magic != LS_MAGIC || r->version != LS_VERSION)
		return "magic";
	if (r->op < LS_OP_MOUNT || r->op > LS_OP_JAILS)
		return "op";
	for (int i = 0; i < LS_NFIELDS; i++) {
		field[i] = NULL;
		if (r->len[i] == LS_ABSENT)
			continue;
		if (r->len[i] > 4096 || r->len[i] > n - off)
			return "field length";
		field[i] = msg + off;
		if (memchr(field[i], '\0', r->len[i]))
			return "NUL in field";
		off += r->len[i];
	}
	return off == n ? NULL : "fields do not add up";
}

static void log_line(int logfd, const char *field[LS_NFIELDS])
{
	static char line[16 + 4 * LS_REQUEST_MAX];
	const struct ls_request *r = (const void *)msg;
	size_t o = (size_t)sprintf(line, "%s 0x%llx", op_names[r->op],
				   (unsigned long long)r->arg);
	for (int i = 0; i < LS_NFIELDS; i++) {
		line[o++] = ' ';
		o += escape(line + o, field[i], r->len[i]);
	}
	line[o++] = '\n';
	if (write(logfd, line, o) != (ssize_t)o)
		exit(1);
}

/* Whether field 1 ends in "/word". */
static int rule(const char *field[LS_NFIELDS], const char *word)
{
	const struct ls_request *r = (const void *)msg;
	size_t n = strlen(word);
	return field[1] && r->len[1] > n &&
	       field[1][r->len[1] - n - 1] == '/' &&
	       memcmp(field[1] + r->len[1] - n, word, n) == 0;
}

/* The reply with a descriptor of our "/" as the new root: the caller
 * chroots to the root it has, so nothing changes for it. */
static void send_root(int fd, const void *reply, size_t n)
{
	union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr al; } c;
	struct iovec v = { (void *)reply, n };
	struct msghdr mh = { .msg_iov = &v, .msg_iovlen = 1,
			     .msg_control = c.buf, .msg_controllen = sizeof c.buf };
	int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &root, sizeof root);
	sendmsg(fd, &mh, MSG_NOSIGNAL);
	close(root);
}

static void answer(int fd, const char *field[LS_NFIELDS])
{
	const struct ls_request *q = (const void *)msg;
	struct {
		struct ls_reply h;
		char text[16];
	} a = { { LS_MAGIC, LS_VERSION, q->op, 0, 0 }, "" };
	size_t n = sizeof a.h;
	if (rule(field, "HANGUP"))
		return;
	if (rule(field, "EPERM"))
		a.h.error = EPERM;
	else if (rule(field, "ENOENT"))
		a.h.error = ENOENT;
	else if (rule(field, "EBUSY"))
		a.h.error = EBUSY;
	else if (rule(field, "BADMAGIC"))
		a.h.magic++;
	else if (rule(field, "BADOP"))
		a.h.op++;
	else if (rule(field, "BADLEN"))
		a.h.len = 16;
	else if (rule(field, "BADERRNO"))
		a.h.error = -EPERM;
	else if (rule(field, "SHORT"))
		n = 8;
	if (rule(field, "TEXT") || q->op == LS_OP_STATUS) {
		a.h.len = 5;
		memcpy(a.text, "fake\n", 5);
		n += 5;
	}
	if (q->op == LS_OP_PIVOT_ROOT && a.h.error == 0)
		send_root(fd, &a, n);  /* a pivot's answer brings the new root */
	else
		send(fd, &a, n, MSG_NOSIGNAL);
}

static void serve(int fd, int logfd)
{
	struct timeval tv = { 5, 0 };
	const char *field[LS_NFIELDS], *why;
	ssize_t n;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	do
		n = recv(fd, msg, sizeof msg, MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n <= 0) {
		if (write(logfd, "EMPTY\n", 6) != 6)
			exit(1);
		return;
	}
	/* Programs that read the mount table (mount(8) does) make the shim
	 * ask for it: refused and not logged, so that they read the kernel's
	 * as before and the log holds the mount family only. */
	if ((size_t)n >= sizeof(struct ls_request) &&
	    ((const struct ls_request *)msg)->magic == LS_MAGIC &&
	    ((const struct ls_request *)msg)->op == LS_OP_MOUNTTABLE) {
		struct ls_reply r = { LS_MAGIC, LS_VERSION, LS_OP_MOUNTTABLE,
				      ENOSYS, 0 };
		send(fd, &r, sizeof r, MSG_NOSIGNAL);
		return;
	}
	if ((why = check((size_t)n, field))) {
		struct ls_reply r = { LS_MAGIC, LS_VERSION, 0, EINVAL, 0 };
		dprintf(logfd, "MALFORMED %s (%zd bytes)\n", why, n);
		send(fd, &r, sizeof r, MSG_NOSIGNAL);
		return;
	}
	log_line(logfd, field);
	answer(fd, field);
}

int main(int argc, char **argv)
{
	int lfd, logfd, null;
	pid_t pid;
	if (argc != 3) {
		fprintf(stderr, "usage: fakebroker ADDRESS LOG\n");
		return 2;
	}
	if ((lfd = listen_on(argv[1])) < 0 ||
	    (logfd = open(argv[2], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			  0644)) < 0 ||
	    (null = open("/dev/null", O_RDWR)) < 0) {
		perror("fakebroker");
		return 1;
	}
	if ((pid = fork()) < 0) {
		perror("fakebroker: fork");
		return 1;
	}
	if (pid > 0) {
		printf("%d\n", (int)pid);
		return 0;
	}
	/* Hold none of the caller's pipes open: $(...) and bats wait for
	 * them to close. */
	for (int fd = 0; fd < 256; fd++)
		if (fd != lfd && fd != logfd && fd != null)
			close(fd);
	dup2(null, 0), dup2(null, 1), dup2(null, 2);
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		serve(fd, logfd);
		close(fd);
	}
}
