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
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "libshare_proto.h"
#include "libshare_wire.h"

enum { LS_MS_BIND = 4096 };

int main(int argc, char **argv)
{
	struct sockaddr_un sa;
	socklen_t salen;
	struct ls_req_out out;
	struct ls_req_view q = { .op = LS_OP_MOUNT, .arg = LS_MS_BIND };
	if (argc < 5) {
		fprintf(stderr, "usage: suidrace ADDR SOURCE TARGET PROGRAM "
			"[ARG]...\n");
		return 2;
	}
	q.field[0] = argv[2];
	q.len[0] = (uint32_t)strlen(argv[2]);
	q.field[1] = argv[3];
	q.len[1] = (uint32_t)strlen(argv[3]);
	if (ls_address(argv[1], &sa, &salen) < 0 || ls_req_encode(&out, &q) < 0)
		return 2;
	/* No SOCK_CLOEXEC: PROGRAM keeps the connection. */
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, salen) < 0 ||
	    sendmsg(fd, &out.mh, MSG_NOSIGNAL) < 0) {
		perror("suidrace");
		return 3;
	}
	execv(argv[4], argv + 4);
	perror(argv[4]);
	return 3;
}
