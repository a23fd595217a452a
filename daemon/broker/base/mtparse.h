/* mtparse.h: the kernel's mount table as text (mtparse.c). */
#ifndef LS_MTPARSE_H
#define LS_MTPARSE_H

#include <stdbool.h>
#include <sys/types.h>
#include "engine.h"

struct entry {                 /* one line of mountinfo */
	int id, parent;
	char dev[32], *root, *mp, *opts, *type, *source, *sbopts;
	bool propagates;       /* shared, master or unbindable */
	bool guessed;          /* from /proc/mounts: id is not the kernel's */
	bool top;              /* guessed: the last line at its mountpoint */
	struct mount *m;
};

/* mountinfo's octal escapes (\040 and friends), undone in place. */
char *unescape(char *s);
/* One mountinfo line into e, pointing into line; -EINVAL if malformed. */
int mt_parse_line(char *line, struct entry *e);
/* Line i of /proc/mounts, v holding lines 0..i-1 parsed already. */
int mt_parse_mounts_line(char *line, struct entry *e, struct entry *v,
			 size_t i);
/* The superblock of an entry ("major:minor"), or 0. */
dev_t entry_dev(const struct entry *e);
/* The lines of a file, malloc'ed; -errno when it cannot be read. */
int read_lines(const char *path, char ***out, size_t *count);
int fd_read_lines(int fd, char ***out, size_t *count);
void free_lines(char **lines, size_t n);

/* The entries by mount id (sorted pointers into v), NULL when out of
 * memory; one of them by id, or NULL. */
struct entry **entry_index(struct entry *v, size_t n);
struct entry *entry_find(struct entry **ix, size_t n, int id);

/* /proc/self/mountinfo read now: its lines, an entry per line (pointing
 * into them; a line that does not parse is an entry of id 0) and the
 * entries by id. */
struct table {
	char **lines;
	struct entry *v, **ix;
	size_t n;
	int watch;             /* /proc/self/mountinfo opened before the
				  read: POLLPRI on it says the kernel's
				  table changed since (mntid.c); -1 for a
				  table that may not be the kernel's now */
	struct entry **by_mp;  /* table_sort(): by parent and mountpoint */
	struct entry *root;    /* and the table's root */
};
int table_read(struct table *t);   /* -errno, and an empty table */
/* the same with its watch: for a table many questions follow (mntid.c's
 * mntid_within()); a table read for one question needs none */
int table_read_watched(struct table *t);
int table_watch(void);             /* a watch for a table about to be read */
struct entry *table_find(const struct table *t, int id);
void table_free(struct table *t);
/* The mount a walk of path reaches, as the table has it: at each directory
 * on the way, the top of what is mounted on it.  Linear in the table at
 * each step, or logarithmic once table_sort() sorted it (-ENOMEM). */
const struct entry *table_walk(const struct table *t, const char *path);
int table_sort(struct table *t);

#endif
