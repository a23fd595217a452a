/* mtcalls: mount(2), umount2(2) and reads of the mount table, as a
 * program of any architecture or libc makes them, each result printed in
 * a form that is the same wherever the calls were served alike.  Built for
 * x86_64 by make, and for other targets and musl by test/cross/cross.bash.
 *
 *   mtcalls CMD... where CMD is one of
 *     mount SRC TARGET TYPE FLAGS DATA   ("-": a NULL pointer)
 *     umount TARGET FLAGS
 *     mountinfo DIR    /proc/self/mountinfo read with fopen, its mounts
 *                      at or under DIR
 *     mounts DIR       /proc/self/mounts read with open and read
 *
 * A call prints "mount TARGET = 0" or "= E<errno number>" (the numbers of
 * x86, arm and arm64 are the same).  A table prints one line per mount,
 * DIR written as "$S" (DIR "/": a jail whose root is what the host calls
 * $S): mountinfo's mountpoint, root, optional fields
 * without their peer group numbers (the broker's, which differ from run to
 * run), type and source; mounts' lines as they are.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

static const char *arg(const char *s)
{
	return strcmp(s, "-") == 0 ? NULL : s;
}

static void result(const char *call, const char *target, int r)
{
	if (r == 0)
		printf("%s %s = 0\n", call, target);
	else
		printf("%s %s = E%d\n", call, target, errno);
}

/* p with a leading dir replaced by "$S"; NULL when p is not dir or under
 * it.  Dir "/" (a jail whose root is the sandbox) is every path. */
static const char *under(const char *p, const char *dir, char *buf,
			 size_t size)
{
	size_t n = strcmp(dir, "/") == 0 ? 0 : strlen(dir);
	if (strncmp(p, dir, n) != 0 || (p[n] != '\0' && p[n] != '/'))
		return NULL;
	snprintf(buf, size, "$S%s", strcmp(p + n, "/") == 0 ? "" : p + n);
	return buf;
}

/* One mountinfo line, without its ids and peer group numbers. */
static void mountinfo_line(char *line, const char *dir)
{
	char *f[64], *save, buf[4096];
	const char *mp;
	int n = 0, i;
	for (char *t = strtok_r(line, " \n", &save); t && n < 64;
	     t = strtok_r(NULL, " \n", &save))
		f[n++] = t;
	if (n < 10 || !(mp = under(f[4], dir, buf, sizeof buf)))
		return;
	printf("  %s %s", mp, f[3]);
	for (i = 6; i < n && strcmp(f[i], "-") != 0; i++)
		printf(" %.*s", (int)strcspn(f[i], ":"), f[i]);
	if (i + 2 < n)
		printf(" - %s %s", f[i + 1], f[i + 2]);
	printf("\n");
}

static int mountinfo(const char *dir)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char *line = NULL;
	size_t size = 0;
	if (!f) {
		printf("mountinfo = E%d\n", errno);
		return 1;
	}
	printf("mountinfo\n");
	while (getline(&line, &size, f) > 0)
		mountinfo_line(line, dir);
	free(line);
	fclose(f);
	return 0;
}

static int mounts(const char *dir)
{
	static char text[1 << 16];
	size_t len = 0;
	ssize_t n;
	int fd = open("/proc/self/mounts", O_RDONLY | O_CLOEXEC);
	char *save, buf[4096];
	if (fd < 0) {
		printf("mounts = E%d\n", errno);
		return 1;
	}
	while (len < sizeof text - 1 &&
	       (n = read(fd, text + len, sizeof text - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	text[len] = '\0';
	printf("mounts\n");
	for (char *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		char src[4096], mp[4096], rest[4096];
		const char *m;
		if (sscanf(l, "%4095s %4095s %4095[^\n]", src, mp, rest) == 3 &&
		    (m = under(mp, dir, buf, sizeof buf)))
			printf("  %s %s %s\n", src, m, rest);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int i = 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (i < argc) {
		const char *c = argv[i];
		if (strcmp(c, "mount") == 0 && i + 5 < argc) {
			result("mount", argv[i + 2],
			       mount(arg(argv[i + 1]), argv[i + 2],
				     arg(argv[i + 3]),
				     strtoul(argv[i + 4], NULL, 0),
				     arg(argv[i + 5])));
			i += 6;
		} else if (strcmp(c, "umount") == 0 && i + 2 < argc) {
			result("umount", argv[i + 1],
			       umount2(argv[i + 1],
				       (int)strtol(argv[i + 2], NULL, 0)));
			i += 3;
		} else if (strcmp(c, "mountinfo") == 0 && i + 1 < argc) {
			mountinfo(argv[i + 1]);
			i += 2;
		} else if (strcmp(c, "mounts") == 0 && i + 1 < argc) {
			mounts(argv[i + 1]);
			i += 2;
		} else {
			fprintf(stderr, "mtcalls: bad command at %s\n", c);
			return 2;
		}
	}
	return 0;
}
