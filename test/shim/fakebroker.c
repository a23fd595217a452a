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
 *   MALFORMED why        a request sharebrokerd's decoder refuses
 *                        (libshare_wire.h; why: "request"), or an op
 *                        the fake does not know (why: "op"); answered
 *                        EINVAL
 *   EMPTY                a connection closed without a request
 *
 * The answer depends on the last component of field 1 (the target):
 * EPERM, ENOENT, EBUSY answer that errno; BADMAGIC, BADOP, BADLEN,
 * BADERRNO, SHORT send a malformed reply of that kind; HANGUP closes
 * without a reply; SILENT never answers (it waits, up to 30 seconds, for
 * the client to hang up); TEXT answers 0 followed by text.  Anything else, and
 * STATUS, answers 0 (STATUS with the text "fake").  MOUNTTABLE requests
 * are answered ENOSYS and not logged: the shim then opens the real file.
 * Well-formed replies are the codec's; the malformed ones are its output
 * spoiled afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include "libshare_proto.h"
#include "libshare_wire.h"

static const char *const op_names[] = {
	[LS_OP_MOUNT] = "MOUNT", [LS_OP_UMOUNT] = "UMOUNT",
	[LS_OP_PIVOT_ROOT] = "PIVOT_ROOT", [LS_OP_CHROOT] = "CHROOT",
	[LS_OP_STATUS] = "STATUS", [LS_OP_STOP] = "STOP",
	[LS_OP_JAILS] = "JAILS",
};

static char msg[LS_REQUEST_MAX + 1];

static int listen_on(const char *addr)
{
	struct sockaddr_un sa;
	socklen_t len;
	int fd;
	if ((errno = -ls_address(addr, &sa, &len)) != 0 ||
	    (fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, len) < 0 || listen(fd, 128) < 0)
		return -1;
	return fd;
}

/* One field, escaped, into out (which has room for 4 bytes per byte). */
static size_t escape(char *out, const char *f, uint32_t len)
{
	size_t o = 0;
	if (!f) {
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

static void log_line(int logfd, const struct ls_req_view *q)
{
	static char line[16 + 4 * LS_REQUEST_MAX];
	size_t o = (size_t)sprintf(line, "%s 0x%llx", op_names[q->op],
				   (unsigned long long)q->arg);
	for (int i = 0; i < LS_NFIELDS; i++) {
		line[o++] = ' ';
		o += escape(line + o, q->field[i], q->len[i]);
	}
	line[o++] = '\n';
	if (write(logfd, line, o) != (ssize_t)o)
		exit(1);
}

/* Whether field 1 ends in "/word". */
static int rule(const struct ls_req_view *q, const char *word)
{
	size_t n = strlen(word);
	return q->field[1] && q->len[1] > n &&
	       q->field[1][q->len[1] - n - 1] == '/' &&
	       memcmp(q->field[1] + q->len[1] - n, word, n) == 0;
}

/* A well-formed reply from the codec, spoiled as field 1 asks; a pivot's
 * answer brings a descriptor of our "/" as the new root (the caller
 * chroots to the root it has, so nothing changes for it). */
static void answer(int fd, const struct ls_req_view *q)
{
	struct ls_rep_view a = { .op = q->op, .fd = -1 };
	struct ls_rep_out o;
	if (rule(q, "HANGUP"))
		return;
	if (rule(q, "SILENT")) {       /* a broker stuck on something */
		struct pollfd p = { .fd = fd, .events = POLLIN };
		poll(&p, 1, 30000);
		return;
	}
	a.error = rule(q, "EPERM") ? EPERM : rule(q, "ENOENT") ? ENOENT :
		  rule(q, "EBUSY") ? EBUSY : 0;
	if (rule(q, "TEXT") || q->op == LS_OP_STATUS) {
		a.text = "fake\n";
		a.len = 5;
	}
	if (q->op == LS_OP_PIVOT_ROOT && a.error == 0)
		a.fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ls_rep_encode(&o, &a) < 0)
		exit(1);
	if (rule(q, "BADMAGIC"))
		o.h.magic++;
	else if (rule(q, "BADOP"))
		o.h.op++;
	else if (rule(q, "BADLEN"))
		o.h.len = 16;
	else if (rule(q, "BADERRNO"))
		o.h.error = -EPERM;
	else if (rule(q, "SHORT")) {
		o.v[0].iov_len = 8;    /* half a header, no text */
		o.mh.msg_iovlen = 1;
	}
	sendmsg(fd, &o.mh, MSG_NOSIGNAL);
	if (a.fd >= 0)
		close(a.fd);
}

/* A reply with no text, as the codec builds it. */
static void answer_errno(int fd, uint16_t op, int error)
{
	struct ls_rep_view a = { .op = op, .error = error, .fd = -1 };
	struct ls_rep_out o;
	if (ls_rep_encode(&o, &a) == 0)
		sendmsg(fd, &o.mh, MSG_NOSIGNAL);
}

static void serve(int fd, int logfd)
{
	struct timeval tv = { 5, 0 };
	struct ls_req_view q;
	const char *why = NULL;
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
	if (ls_req_decode(msg, (size_t)n, &q) < 0)
		why = "request";       /* what sharebrokerd refuses */
	else if (q.op == LS_OP_MOUNTTABLE) {
		answer_errno(fd, LS_OP_MOUNTTABLE, ENOSYS);
		return;
	} else if (q.op > LS_OP_JAILS)
		why = "op";
	if (why) {
		dprintf(logfd, "MALFORMED %s (%zd bytes)\n", why, n);
		answer_errno(fd, LS_OP_NONE, EINVAL);
		return;
	}
	log_line(logfd, &q);
	answer(fd, &q);
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
