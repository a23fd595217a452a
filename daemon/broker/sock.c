/* sock.c: the broker's socket address, for sharebrokerd and sharectl. */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "sock.h"

socklen_t sock_address(const char *addr, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	size_t n = strlen(addr);
	if (n == 0 || n >= sizeof sa->sun_path)
		return 0;
	memcpy(sa->sun_path, addr, n);
	if (addr[0] == '@')
		sa->sun_path[0] = '\0';          /* abstract */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
			   (addr[0] != '@'));
}

/* Connects to addr (sharectl, and the check for a running broker). */
int sock_connect(const char *addr)
{
	struct sockaddr_un sa;
	socklen_t len = sock_address(addr, &sa);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (!len || fd < 0) {
		if (fd >= 0)
			close(fd);
		return -EINVAL;
	}
	if (connect(fd, (struct sockaddr *)&sa, len) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

