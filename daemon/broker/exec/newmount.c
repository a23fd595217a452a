/* newmount.c: a new filesystem, made as the caller would make it.
 *
 * The kernel reads paths of the caller's in a new mount: the source of a
 * filesystem on a device, and options such as overlay's lowerdir, ext4's
 * journal_path or xfs's logdev, each from the caller's root and, when
 * relative, from its cwd.  The broker cannot have the kernel read them
 * there and still mount at a place of its own (the legacy mount(2) reads
 * the target from the same root and cwd as everything else).
 *
 * So the broker looks those paths up itself, in the caller's root and from
 * its cwd, with resolve() (the caller's rules: ".." stops at its root,
 * symlinks restart there, procfs magic links only where they stay inside
 * it), and lays the objects out in a directory of its own, NEWROOT, so
 * that each path, spelled as the caller spelled it, names the same object
 * there (newroot.c).  A child process then makes the mount with NEWROOT as
 * its root and NEWROOT/.t, the staging place, as its cwd and target,
 * holding no descriptor at all.  The request reaches the kernel as the
 * caller wrote it, so the kernel's table shows the caller's words.
 * Whatever else in it the kernel might read as a path (an option this
 * table does not know, "..", /proc/self/cwd, /proc/self/fd/N) is read
 * inside NEWROOT, where there is nothing but the caller's own objects: no
 * spelling reaches the host.
 *
 * Path options are known per filesystem type (paths_of()); a source is a
 * path when the filesystem needs a device ("nodev" missing in
 * /proc/filesystems) or when the table says so (ecryptfs, ubifs).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "broker.h"
#include "base/log.h"
#include "exec/exec.h"
#include "exec/newmount.h"
#include "hold/hold.h"
#include "resolve/resolve.h"

struct fstype {
	const char *type;
	bool source_is_path;       /* besides device filesystems */
	const char *keys[6];       /* options whose values are paths */
	const char *lists[3];      /* ':'-separated lists of paths */
};

/* From each filesystem's option parser in Linux 6.18 (kern_path(),
 * lookup_bdev() or bdev_file_open_by_path() on an option's value). */
static const struct fstype fstypes[] = {
	{ "overlay", false, { "upperdir", "workdir", "lowerdir+", "datadir+" },
	  { "lowerdir" } },
	{ "ext2", false, { "journal_path" }, { 0 } },
	{ "ext3", false, { "journal_path" }, { 0 } },
	{ "ext4", false, { "journal_path" }, { 0 } },
	{ "xfs", false, { "logdev", "rtdev" }, { 0 } },
	{ "btrfs", false, { "device" }, { 0 } },
	{ "reiserfs", false, { "jdev" }, { 0 } },
	{ "erofs", false, { "device" }, { 0 } },
	{ "ecryptfs", true, { 0 }, { 0 } },
	{ "ubifs", true, { 0 }, { 0 } },
};

static const struct fstype *fstype_of(const char *type)
{
	for (size_t i = 0; i < sizeof fstypes / sizeof *fstypes; i++)
		if (strcmp(fstypes[i].type, type) == 0)
			return &fstypes[i];
	return NULL;
}

/* Whether type is known to the kernel and needs a device: 1, 0, or -1
 * when the kernel does not know it (yet: mount(2) may load its module).
 * A type it knew it knows for good, and the same way: the last few are
 * kept (a read of /proc/filesystems is four system calls). */
static int needs_device(const char *type)
{
	static struct { char name[32]; int dev; } seen[8];
	static unsigned next;
	char line[256];
	int found = -1;
	for (size_t i = 0; i < sizeof seen / sizeof *seen; i++)
		if (strcmp(seen[i].name, type) == 0 && *type)
			return seen[i].dev;
	FILE *f = fopen("/proc/filesystems", "re");
	while (f && found < 0 && fgets(line, sizeof line, f)) {
		char *name = strchr(line, '\t');
		if (!name)
			continue;
		name[strcspn(name, "\n")] = '\0';
		if (strcmp(name + 1, type) == 0)
			found = strncmp(line, "nodev", 5) != 0;
	}
	if (f)
		fclose(f);
	if (found >= 0 && strlen(type) < sizeof seen->name) {
		strcpy(seen[next].name, type);
		seen[next++].dev = found;
		next %= sizeof seen / sizeof *seen;
	}
	return found;
}

static void unescape_bs(char *s)
{
	char *w = s;
	for (const char *r = s; *r; r++) {
		if (*r == '\\' && r[1])
			r++;
		*w++ = *r;
	}
	*w = '\0';
}

/* Looks up the caller's path at data[off, off+len) (esc: '\' escapes, as
 * overlay's parser reads it) and notes it in q. */
static int note(struct request *r, struct newreq *q, const char *text,
		size_t off, size_t len, bool esc)
{
	struct named n;
	if (q->nref == MAXPATHS)
		return -EINVAL;
	char *p = strndup(text + off, len);
	if (!p)
		return -ENOMEM;
	if (esc)
		unescape_bs(p);
	int err = resolve(r, p, RES_FOLLOW, &n);
	if (err) {
		free(p);
		return err;
	}
	q->ref[q->nref++] = (struct ref){ .path = p, .obj = q->nobj,
					  .off = off, .len = len,
					  .in_data = text != q->source };
	q->obj[q->nobj++] = (struct object){ .fd = n.fd };
	n.fd = -1;
	named_free(&n);
	return 0;
}

static bool is_key(const char *const *keys, size_t n, const char *opt,
		   size_t klen)
{
	for (size_t i = 0; i < n && keys[i]; i++)
		if (strlen(keys[i]) == klen && memcmp(keys[i], opt, klen) == 0)
			return true;
	return false;
}

/* The paths in option data[off, off+len) of type t. */
static int option(struct request *r, const struct fstype *t, struct newreq *q,
		  size_t off, size_t len)
{
	const char *opt = q->data + off, *eq = memchr(opt, '=', len);
	size_t klen = eq ? (size_t)(eq - opt) : len;
	bool list = t && is_key(t->lists, 3, opt, klen);
	if (!eq || !t || !(list || is_key(t->keys, 6, opt, klen)))
		return 0;
	const char *v = eq + 1, *end = opt + len;
	int err = 0;
	while (!err && v < end) {
		/* lowerdir's layers: ':' separates, "::" marks data-only
		 * layers, '\' escapes */
		const char *e = v;
		while (list && e < end && *e != ':')
			e += *e == '\\' && e + 1 < end ? 2 : 1;
		if (!list)
			e = end;
		if (e > v)
			err = note(r, q, q->data, (size_t)(v - q->data),
				   (size_t)(e - v), list);
		for (v = e; v < end && *v == ':'; v++)
			;
	}
	return err;
}

/* The paths in the caller's data, options split at ',' (overlay's parser
 * lets '\' escape one). */
static int scan_data(struct request *r, const struct fstype *t,
		     struct newreq *q)
{
	bool esc = t && t->lists[0];
	size_t off = 0, n = q->data ? strlen(q->data) : 0;
	int err = 0;
	while (!err && off < n) {
		size_t e = off;
		while (e < n && q->data[e] != ',')
			e += esc && q->data[e] == '\\' && e + 1 < n ? 2 : 1;
		err = option(r, t, q, off, e - off);
		off = e + 1;
	}
	return err;
}

/* The caller's data again, with the paths that newroot.c could not lay
 * out as spelled replaced by where it put their objects. */
static char *render_data(const struct newreq *q, bool esc)
{
	size_t n = strlen(q->data), size = n + 1, at = 0, from = 0;
	for (size_t i = 0; i < q->nref; i++)
		size += q->ref[i].in_data && !q->ref[i].placed ?
			2 * strlen(q->obj[q->ref[i].obj].where) : 0;
	char *out = malloc(size);
	for (size_t i = 0; out && i < q->nref; i++) {
		const struct ref *r = &q->ref[i];
		if (!r->in_data || r->placed)
			continue;
		memcpy(out + at, q->data + from, r->off - from);
		at += r->off - from;
		for (const char *c = q->obj[r->obj].where; *c; c++) {
			if (esc && strchr(":,\\", *c))
				out[at++] = '\\';
			out[at++] = *c;
		}
		from = r->off + r->len;
	}
	if (out) {
		memcpy(out + at, q->data + from, n - from);
		out[at + n - from] = '\0';
	}
	return out;
}

static void newreq_free(struct newreq *q)
{
	for (size_t i = 0; i < q->nobj; i++) {
		if (q->obj[i].fd >= 0)
			close(q->obj[i].fd);
		free(q->obj[i].where);
	}
	for (size_t i = 0; i < q->nref; i++)
		free(q->ref[i].path);
	free(q);
}

/* The child: no descriptor, NEWROOT as its root, NEWROOT/.t as its cwd. */
#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif

struct child {
	const struct broker *b;
	const char *source, *type, *data;
	unsigned long flags;
};

/* The child's descriptor table is the broker's (CLONE_FILES): it gets one
 * of its own holding nothing, which close_range() makes without copying
 * the broker's (a descriptor per mount: copying and closing them was most
 * of a tmpfs mount at 10,000 mounts).  Where the kernel cannot, a copy
 * is unshared and emptied, never the broker's own table. */
static int child_mount(void *arg)
{
	const struct child *c = arg;
	if (chdir(c->b->newroot) < 0 || chroot(".") < 0 || chdir("/.t") < 0)
		return errno;
	if (syscall(SYS_close_range, 0u, ~0u, CLOSE_RANGE_UNSHARE) < 0) {
		long max = sysconf(_SC_OPEN_MAX);
		if (unshare(CLONE_FILES) < 0)
			return errno;
		for (long fd = 0; fd < (max > 0 && max < (1 << 20) ? max :
					1 << 20); fd++)
			close((int)fd);
	}
	return mount(c->source, ".", c->type, c->flags, c->data) < 0 ? errno
								       : 0;
}

/* A child as vfork() makes it (memory shared, the broker waiting), which
 * makes system calls only, on copies of the broker's root and cwd; a
 * fork() copied the page tables of a broker holding a descriptor per
 * mount (about 2 ms a tmpfs mount on a small table, 7 ms at 19,000
 * mounts), and vfork() its descriptor table. */
static int fork_mount(struct request *r, const char *source, const char *type,
		      unsigned long flags, const char *data)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	struct child c = { r->b, source, type, data, flags };
	int status = 0;
	/* the child ends by returning: clone(2)'s wrapper makes the exit
	 * call, and no noreturn call of ours has a sanitizer's hook run in
	 * the child, chrooted, where it cannot open its log and exits 1 */
	pid_t pid = clone(child_mount, stack + sizeof stack,
			  CLONE_VM | CLONE_VFORK | CLONE_FILES | SIGCHLD, &c);
	if (pid < 0)
		return -errno;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) ? -WEXITSTATUS(status) : -EIO;
}

/* Filesystems that read no path, no descriptor number and nothing of
 * the mounting process's root or cwd: their source is a mere name, their
 * options numbers and words (each one's parser in Linux 6.18).  Mounted
 * by the broker itself on NEWROOT/.t, there is nothing for the child's
 * empty root to keep from the host.  Not autofs or fuse (fd=), nor any
 * type this list does not know. */
static bool reads_no_path(const char *type)
{
	static const char *const plain[] = {
		"tmpfs", "ramfs", "proc", "sysfs", "devpts", "mqueue",
		"hugetlbfs", "cgroup2",
	};
	for (size_t i = 0; i < sizeof plain / sizeof *plain; i++)
		if (strcmp(plain[i], type) == 0)
			return true;
	return false;
}

/* The mount on NEWROOT/.t: by a child in NEWROOT, or, for a filesystem
 * that reads no path (and none named), by the broker on q->tdir. */
static int make_mount(struct request *r, const struct newreq *q,
		      const char *type, unsigned long flags, const char *data)
{
	char at[32];
	if (q->nobj || q->nref || !reads_no_path(type))
		return fork_mount(r, q->source, type, flags, data);
	snprintf(at, sizeof at, "/proc/self/fd/%d", q->tdir);
	return mount(q->source, at, type, flags, data) < 0 ? -errno : 0;
}

/* The caller's paths of a new mount, looked up and laid out in NEWROOT. */
static int prepare(struct request *r, const char *type, struct newreq *q)
{
	const struct fstype *t = fstype_of(type);
	int dev = needs_device(type), err = scan_data(r, t, q);
	if (!err && q->source && (dev == 1 || (t && t->source_is_path)))
		err = note(r, q, q->source, 0, strlen(q->source), false);
	return err ? err : newroot_layout(r, q);
}

/* The caller's new filesystem, mounted at NEWROOT/.t. */
int newmount_make(struct request *r, const char *source, const char *type,
		  unsigned long flags, const char *data)
{
	struct broker *b = r->b;
	struct newreq *q = calloc(1, sizeof *q);
	char *rendered = NULL;
	if (!q)
		return -ENOMEM;
	q->data = data;
	q->tdir = -1;
	q->source = source ? source : needs_device(type) == 1 ? NULL : "none";
	int err = prepare(r, type, q);
	const struct fstype *t = fstype_of(type);
	for (size_t i = 0; !err && i < q->nref; i++)
		if (!q->ref[i].placed && !q->ref[i].in_data)
			q->source = q->obj[q->ref[i].obj].where;
		else if (!q->ref[i].placed && !rendered &&
			 !(rendered = render_data(q, t && t->lists[0])))
			err = -ENOMEM;
	enum phase was = phase(PHASE_EXECUTE);
	if (!err)
		err = make_mount(r, q, type, flags, rendered ? rendered : data);
	newroot_clear(b, q);
	phase(was);
	free(rendered);
	newreq_free(q);
	return err;
}
