/* wire-socket-test: the codec's address rule (include/libshare_wire.h),
 * and what only the kernel does to a reply's descriptors, through a real
 * SOCK_SEQPACKET pair: one crosses close-on-exec, and any more than one
 * fail the reply with EIO and are all closed, never left open in the
 * caller (a shim that leaked them would leak into its host program). */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "libshare_wire.h"
#define TAP_MAIN
#include "tap.h"

static char buf[LS_REQUEST_MAX];

static void test_address(void)
{
	static const char *const refused[] = { "", "@", "/", "libshare",
		"./libshare.sock", "run/libshare.sock" };
	const size_t base = offsetof(struct sockaddr_un, sun_path);
	char name[LS_ADDRESS_MAX + 2];
	struct sockaddr_un sa;
	socklen_t len;
	ok(ls_address("@libshare", &sa, &len) == 0 && len == base + 9 &&
	   sa.sun_path[0] == '\0' && memcmp(sa.sun_path + 1, "libshare", 8) == 0,
	   "@libshare is abstract: a leading NUL, the length ends it");
	ok(ls_address("/run/ls.sock", &sa, &len) == 0 && len == base + 13 &&
	   strcmp(sa.sun_path, "/run/ls.sock") == 0, "a path keeps its NUL");
	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
		ok(ls_address(refused[i], &sa, &len) == -EINVAL,
		   "address refused, EINVAL: \"%s\"", refused[i]);
	for (const char *c = "@/"; *c; c++) {
		memset(name, 'a', sizeof name);
		name[0] = *c;
		name[LS_ADDRESS_MAX] = '\0';
		ok(ls_address(name, &sa, &len) == 0 &&
		   len == base + LS_ADDRESS_MAX + (*c == '/'),
		   "%c form: %zu bytes pass", *c, LS_ADDRESS_MAX);
		name[LS_ADDRESS_MAX] = 'a';
		name[LS_ADDRESS_MAX + 1] = '\0';
		ok(ls_address(name, &sa, &len) == -EINVAL,
		   "address refused, EINVAL: %c form of %zu bytes", *c,
		   LS_ADDRESS_MAX + 1);
	}
	ok(strcmp(ls_socket_name(NULL), LS_SOCKET_DEFAULT) == 0 &&
	   strcmp(ls_socket_name(""), LS_SOCKET_DEFAULT) == 0 &&
	   strcmp(ls_socket_name("@x"), "@x") == 0,
	   "LIBSHARE_SOCKET unset or empty is the default");
}

/* The lowest free descriptor: a received one left open would take it. */
static int lowest_free(void)
{
	int fd = dup(0);
	close(fd);
	return fd;
}

/* A reply to LS_OP_TREE carrying k copies of fd, as a broken broker
 * could send it. */
static void send_fds(int sock, int k, int fd)
{
	struct ls_rep_view a = { .op = LS_OP_TREE, .fd = fd };
	struct ls_rep_out o;
	struct cmsghdr *cm;
	int fds[3] = { fd, fd, fd };
	ls_rep_encode(&o, &a);
	o.mh.msg_controllen = CMSG_SPACE(k * sizeof(int));
	cm = CMSG_FIRSTHDR(&o.mh);
	cm->cmsg_len = CMSG_LEN(k * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, k * sizeof(int));
	sendmsg(sock, &o.mh, MSG_NOSIGNAL);
}

/* What a client does: receive, decode, close what it does not keep. */
static int receive(int sock, struct ls_rep_view *a)
{
	static struct ls_rep_in in;
	static char text[8];
	ssize_t n;
	int r;
	ls_rep_expect(&in, text, sizeof text);
	n = recvmsg(sock, &in.mh, LS_REP_RECV_FLAGS);
	r = n > 0 ? ls_rep_decode(&in, (size_t)n, LS_OP_TREE, a) : -EIO;
	for (int i = 0; i < in.nfd; i++)
		if (r < 0 || in.fds[i] != a->fd)
			close(in.fds[i]);
	return r < 0 ? r : in.nfd;
}

static void test_socket(void)
{
	int sv[2], null = open("/dev/null", O_RDONLY | O_CLOEXEC), before;
	const struct ls_req_view sent = { .op = LS_OP_UMOUNT, .arg = 2,
					  .field = { "", "/m" }, .len = { 0, 2 } };
	struct ls_req_view q;
	struct ls_req_out o;
	struct ls_rep_view a;
	struct stat st, nst;
	ssize_t n = -1;
	if (null < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		ok(0, "a SOCK_SEQPACKET pair");
		return;
	}
	before = lowest_free();
	if (ls_req_encode(&o, &sent) == 0 &&
	    sendmsg(sv[0], &o.mh, MSG_NOSIGNAL) == (ssize_t)o.size)
		n = recv(sv[1], buf, sizeof buf, MSG_TRUNC);
	ok(n > 0 && ls_req_decode(buf, (size_t)n, &q) == 0 &&
	   q.op == LS_OP_UMOUNT && q.arg == 2 && q.len[0] == 0 && q.field[0] &&
	   q.len[1] == 2 && memcmp(q.field[1], "/m", 2) == 0 && !q.field[2],
	   "a request crosses a socket: empty and absent fields kept apart");
	send_fds(sv[1], 1, null);
	ok(receive(sv[0], &a) == 1 && a.fd != null && fstat(a.fd, &st) == 0 &&
	   fstat(null, &nst) == 0 && st.st_rdev == nst.st_rdev &&
	   (fcntl(a.fd, F_GETFD) & FD_CLOEXEC), "a descriptor crosses, close-on-exec");
	close(a.fd);
	send_fds(sv[1], 2, null);
	ok(receive(sv[0], &a) == -EIO && lowest_free() == before,
	   "reply refused, EIO: two descriptors, and both are closed");
	send_fds(sv[1], 3, null);
	ok(receive(sv[0], &a) == -EIO && lowest_free() == before,
	   "reply refused, EIO: three, the kernel keeps one back, none stays");
	close(sv[0]);
	close(sv[1]);
	close(null);
}

int main(void)
{
	test_address();
	test_socket();
	return tap_done();
}
