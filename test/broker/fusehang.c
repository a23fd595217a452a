/* fusehang DIR: mounts a FUSE filesystem on DIR whose server never
 * answers (it never reads /dev/fuse), then waits to be killed.  Any
 * request to it blocks its caller until then; when this process dies, the
 * connection is aborted and the blocked calls fail with ENOTCONN.  For
 * the broker's tests of a stalled filesystem (broker-fusehang.bats).
 * Prints "ready" once the mount is there.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mount.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char opts[128];
	int fd;
	if (argc != 2) {
		fprintf(stderr, "usage: fusehang DIR\n");
		return 2;
	}
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("/dev/fuse");
		return 1;
	}
	snprintf(opts, sizeof opts, "fd=%d,rootmode=40000,user_id=0,group_id=0",
		 fd);
	if (mount("fusehang", argv[1], "fuse.fusehang", 0, opts) < 0) {
		perror(argv[1]);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
