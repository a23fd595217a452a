/* mtname.c: which names are the virtual mount table (see mounttable.c). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "shim.h"

#define PROC_MAGIC 0x9fa0
#define PROC_ROOT_INO 1

/* The directory a relative name starts from, into buf: the cwd, or the
 * dirfd's path (/proc/self/fd, or, without /proc, a dirfd on the proc
 * root: test/diff/spy.so redirects "/proc/..." there).  0 or -1. */
int shim_base_dir(int dirfd, char *buf, size_t size)
{
	char link[40];
	struct statfs sf;
	struct stat st;
	long n;
	if (dirfd == AT_FDCWD) {
		n = shim_raw(SYS_getcwd, (long)buf, (long)size, 0, 0, 0, 0);
		return n > 0 && buf[0] == '/' ? 0 : -1;
	}
	if (dirfd < 0)
		return -1;
	memcpy(link, "/proc/self/fd/", 14);
	n = 14 + (dirfd >= 10) + (dirfd >= 100) + (dirfd >= 1000) +
	    (dirfd >= 10000) + (dirfd >= 100000) + (dirfd >= 1000000) +
	    (dirfd >= 10000000) + (dirfd >= 100000000) + (dirfd >= 1000000000);
	link[n + 1] = '\0';
	for (int v = dirfd; n >= 14; v /= 10)
		link[n--] = (char)('0' + v % 10);
	n = shim_raw(SYS_readlinkat, AT_FDCWD, (long)link, (long)buf,
		     (long)size - 1, 0, 0);
	if (n > 0 && buf[0] == '/') {
		buf[n] = '\0';
		return 0;
	}
	if (shim_raw(SYS_fstatfs, dirfd, (long)&sf, 0, 0, 0, 0) == 0 &&
	    sf.f_type == PROC_MAGIC &&
	    shim_raw(SYS_fstat, dirfd, (long)&st, 0, 0, 0, 0) == 0 &&
	    st.st_ino == PROC_ROOT_INO) {
		strcpy(buf, "/proc");
		return 0;
	}
	return -1;
}

/* The components of dir/path, "" and "." dropped ("..": kept, so that it
 * matches nothing).  Returns their number, at most max, or -1. */
static int split(char *s, char **part, int max)
{
	int n = 0;
	for (char *t = strtok_r(s, "/", &s); t; t = strtok_r(NULL, "/", &s)) {
		if (strcmp(t, ".") == 0)
			continue;
		if (n == max)
			return -1;
		part[n++] = t;
	}
	return n;
}

/* A decimal number, or -1. */
static long number(const char *s)
{
	long v = 0;
	if (!*s || *s == '0')
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > 100000000)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v;
}

static int own_process(const char *s)
{
	return strcmp(s, "self") == 0 ||
	       number(s) == shim_raw(SYS_getpid, 0, 0, 0, 0, 0, 0);
}

static int own_thread(const char *s)
{
	long tid = number(s);
	return tid > 0 && shim_raw(SYS_tgkill,
				   shim_raw(SYS_getpid, 0, 0, 0, 0, 0, 0),
				   tid, 0, 0, 0, 0) == 0;
}

/* The slow half of virtual_kind(), for a basename that matched: out of
 * line, so that the common case does not pay for its buffer. */
__attribute__((noinline)) int shim_full_kind(int dirfd, const char *path,
					   int kind, int *proc, int *pid)
{
	char buf[SHIM_PATH_MAX * 2 + 2];
	char *p[8];
	int n;
	size_t len = strnlen(path, SHIM_PATH_MAX);
	if (len == SHIM_PATH_MAX)
		return VT_NONE;
	buf[0] = '\0';
	if (path[0] != '/' && shim_base_dir(dirfd, buf, SHIM_PATH_MAX) < 0)
		return VT_NONE;
	strcat(buf, "/");
	strcat(buf, path);
	n = split(buf, p, 8);
	*proc = n > 0 && strcmp(p[0], "proc") == 0;
	*pid = 0;
	if (n == 2 && strcmp(p[0], "etc") == 0 && strcmp(p[1], "mtab") == 0)
		return VT_MOUNTS;
	if (kind == VT_MTAB || !*proc)
		return VT_NONE;
	if (n == 2)
		return strcmp(p[1], "mounts") == 0 ? VT_MOUNTS : VT_NONE;
	if (n == 3 && (strcmp(p[1], "thread-self") == 0 || own_process(p[1])))
		return kind;
	if (n == 3 && (*pid = (int)number(p[1])) > 0)
		return kind;       /* another's: the broker says whether */
	*pid = 0;
	if (n == 5 && strcmp(p[2], "task") == 0 && own_process(p[1]) &&
	    own_thread(p[3]))
		return kind;
	return VT_NONE;
}
