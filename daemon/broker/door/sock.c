/* sock.c: the broker's socket address (the rule is the codec's,
 * ls_address() in libshare_wire.h), and the check for a running broker. */
#include <errno.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "door/sock.h"
#include "libshare_wire.h"

socklen_t sock_address(const char *addr, struct sockaddr_un *sa)
{
	socklen_t len;
	return ls_address(addr, sa, &len) == 0 ? len : 0;
}

/* Connects to addr: a broker that answers is alive, a path that refuses
 * is a stale socket file. */
int sock_connect(const char *addr)
{
	struct sockaddr_un sa;
	socklen_t len;
	int fd, err = ls_address(addr, &sa, &len);
	if (err < 0)
		return err;
	if ((fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, len) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}
