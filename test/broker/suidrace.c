/* suidrace: the set-user-ID race against the broker's idea of privilege
 * (test/broker/broker-privilege.bats).
 *
 *   suidrace ADDR SOURCE TARGET PROGRAM [ARG]...
 *
 * Connects to the broker at ADDR (as whoever runs it), sends a request to
 * bind SOURCE onto TARGET, and without waiting for the answer executes
 * PROGRAM, which inherits the connection.  When PROGRAM is set-user-ID
 * root, the process at the other end of the connection is root by the time
 * the broker looks at /proc: a broker that believed /proc then would mount
 * for an unprivileged user.  Exit status (only when the exec fails): 3.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "libshare_proto.h"

enum { LS_MS_BIND = 4096 };

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	static char msg[LS_REQUEST_MAX];
	struct ls_request r = { .magic = LS_MAGIC, .version = LS_VERSION,
				.op = LS_OP_MOUNT, .arg = LS_MS_BIND,
				.len = { 0, 0, LS_ABSENT, LS_ABSENT } };
	if (argc < 5) {
		fprintf(stderr, "usage: suidrace ADDR SOURCE TARGET PROGRAM "
			"[ARG]...\n");
		return 2;
	}
	size_t alen = strlen(argv[1]), s = strlen(argv[2]), t = strlen(argv[3]);
	if (alen >= sizeof sa.sun_path || s + t > sizeof msg - sizeof r)
		return 2;
	memcpy(sa.sun_path, argv[1], alen);
	if (argv[1][0] == '@')
		sa.sun_path[0] = '\0';
	r.len[0] = (uint32_t)s;
	r.len[1] = (uint32_t)t;
	memcpy(msg, &r, sizeof r);
	memcpy(msg + sizeof r, argv[2], s);
	memcpy(msg + sizeof r + s, argv[3], t);
	/* No SOCK_CLOEXEC: PROGRAM keeps the connection. */
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa,
			      (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
					  alen)) < 0 ||
	    send(fd, msg, sizeof r + s + t, 0) < 0) {
		perror("suidrace");
		return 3;
	}
	execv(argv[4], argv + 4);
	perror(argv[4]);
	return 3;
}
