/* logcatch: a syslog daemon for the tests, as small as one can be.
 *
 *   logcatch SOCKET OUT
 *
 * Binds SOCKET (AF_UNIX, SOCK_DGRAM: what syslog(3) writes to /dev/log)
 * and appends every datagram to OUT as one line, "<PRI>" prefix and all,
 * so that a test can check the facility and level as well as the text.
 * Runs until killed.
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char msg[8192];
	ssize_t n;
	int fd;
	FILE *out;
	if (argc != 3 || strlen(argv[1]) >= sizeof sa.sun_path) {
		fprintf(stderr, "usage: logcatch SOCKET OUT\n");
		return 2;
	}
	strcpy(sa.sun_path, argv[1]);
	unlink(argv[1]);
	if ((fd = socket(AF_UNIX, SOCK_DGRAM, 0)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    !(out = fopen(argv[2], "a"))) {
		perror("logcatch");
		return 1;
	}
	while ((n = recv(fd, msg, sizeof msg - 1, 0)) >= 0) {
		msg[n] = '\0';
		fprintf(out, "%s\n", msg);
		fflush(out);
	}
	return 1;
}
