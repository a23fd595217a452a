/* nsstate.c: the broker's mount namespaces across a restart (issue 9
 * item 3, issue 11).
 *
 * The kernel keeps a copy's mounts: under STATE/ns/PID.ID, a subtree of
 * the broker's own table, which the next broker's import takes for its
 * own.  What only the broker knows goes into the state file (state.c has
 * the lines' format): which subtree is which namespace (its number, so
 * that mnt:[N] stays), the copy of the root its first process had (where
 * setns re-roots to), and the tokens handed out.  At start the subtree
 * becomes its namespace again (graph_adopt_ns()), before any request.
 *
 * Tokens: the dead broker's ends of them are closed, the callers' ends
 * are still open and still name the namespace by their socket's inode.
 * They come back without an end (-1): whether a caller still holds one is
 * read from every process's descriptors (nslife.c, ns_orphans_drop()),
 * once here and then only when the namespace would otherwise end.  Which
 * processes are in a namespace needs no line: it follows from their
 * roots, as before the restart.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "base/base.h"
#include "base/log.h"
#include "base/mtparse.h"
#include "hold/hold.h"
#include "ns/ns.h"
#include "ns/nsrec.h"
#include "persist/persist.h"

enum { NS_FIELDS = 8, TOKEN_FIELDS = 7 };

static struct nsrec *rec_find(const struct ns *ns)
{
	struct nsrec *n = ns_recs;
	while (n && n->ns != ns)
		n = n->next;
	return n;
}

/* " <mount id> <path>": where descriptor fd is, as the kernel names it. */
static void put_place(FILE *f, int fd)
{
	char *p = fd >= 0 ? fd_path(fd) : NULL;
	fprintf(f, " %d ", p ? fd_mnt_id(fd) : 0);
	put_escaped(f, p ? p : "-");
	free(p);
}

static void put_tokens(FILE *f, const struct nsrec *n, unsigned id,
		       const char *pre)
{
	for (size_t i = 0; n && i < n->ntok; i++) {
		const struct token *t = &n->tok[i];
		fprintf(f, "%snstoken %u %lu %d %u", pre, id,
			(unsigned long)t->ino, t->member, (unsigned)t->uid);
		put_place(f, t->place);
		fputc('\n', f);
	}
}

/* The namespaces of the graph, each line after pre (a namespace the open
 * plan frees is no longer listed). */
static void nsstate_put(struct broker *b, FILE *f, const char *pre)
{
	for (struct list *l = b->g.nss.next; l != &b->g.nss; l = l->next) {
		struct ns *ns = list_entry(l, struct ns, link);
		struct nsrec *n = rec_find(ns);
		struct handle *h = ns->root ? handle_of(b, ns->root) : NULL;
		char *path = ns != b->ns && h && h->fd >= 0 ? fd_path(h->fd) :
			     NULL;
		if (ns == b->ns)
			put_tokens(f, n, 0, pre);
		if (!path)
			continue;
		fprintf(f, "%sns %u %d %u:%u ", pre, ns->id, h->kid,
			major(h->dev), minor(h->dev));
		put_escaped(f, ns->root->root);
		fputc(' ', f);
		put_escaped(f, path);
		put_place(f, n ? n->root : -1);
		fputc('\n', f);
		put_tokens(f, n, ns->id, pre);
		free(path);
	}
}

static bool nsstate_line(const char *line)
{
	return strncmp(line, "ns ", 3) == 0 || strncmp(line, "nstoken ", 8) == 0;
}

/* The fields of line, split in place at its blanks, the first max of
 * them in f; how many there are. */
static int split(char *line, char **f, int max)
{
	char *save = NULL;
	int n = 0;
	for (char *t = strtok_r(line, " \n", &save); t;
	     t = strtok_r(NULL, " \n", &save))
		if (n++ < max)
			f[n - 1] = t;
	return n;
}

/* A place saved by put_place(), opened again: on mount kid, which must be
 * one of ns, by a walk that follows no symlink; -1 if it is gone. */
static int open_place(struct broker *b, const struct ns *ns, const char *kid,
		      char *path)
{
	struct mount *m = mount_of_kid(b, atoi(kid));
	int fd = m && m->ns == ns && strcmp(path, "-") ?
		 walk_path(unescape(path)) : -1;
	if (fd >= 0 && fd_mnt_id(fd) == atoi(kid))
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The root mount an "ns" line names, if the kernel still has it where
 * it was, as a mount of the broker's own namespace (the import's). */
static struct mount *root_there(struct broker *b, char **f)
{
	unsigned ma, mi;
	struct mount *m = mount_of_kid(b, atoi(f[2]));
	struct handle *h = m ? handle_of(b, m) : NULL;
	char *now = h && h->fd >= 0 ? fd_path(h->fd) : NULL;
	bool same = now && sscanf(f[3], "%u:%u", &ma, &mi) == 2 &&
		    major(h->dev) == ma && minor(h->dev) == mi &&
		    m->ns == b->ns && m->parent &&
		    strcmp(m->root, unescape(f[4])) == 0 &&
		    strcmp(now, unescape(f[5])) == 0;
	free(now);
	return same ? m : NULL;
}

/* "ns" line: the subtree at its root mount is that namespace again. */
static void restore_ns(struct broker *b, char **f)
{
	unsigned long id = strtoul(f[1], NULL, 10);
	struct mount *m = id && id < UINT_MAX ? root_there(b, f) : NULL;
	struct nsrec *n = NULL;
	struct ns *ns;
	int err = m ? graph_adopt_ns(&b->g, m, (unsigned)id, &ns) : -ENOENT;
	if (!err && !(n = calloc(1, sizeof *n)))
		err = -ENOMEM;         /* a namespace nobody can enter: freed */
	if (err) {
		log_msg(LOG_WARNING, "%s: namespace mnt:[%llu] not restored "
			"(%s): its mounts stay as the broker's own", f[5],
			NS_NUM_BASE + id, strerror(-err));
		return;
	}
	n->ns = ns;
	n->num = NS_NUM_BASE + ns->id;
	n->root = open_place(b, ns, f[6], f[7]);
	n->next = ns_recs;
	ns_recs = n;
	ns_nrecs++;
	log_msg(LOG_INFO, "%s: namespace mnt:[%llu] restored, %u mounts",
		f[5], n->num, ns->count);
}

/* "nstoken" line: a token of a namespace restored (0: the broker's own),
 * without an end of ours. */
static void restore_token(struct broker *b, char **f)
{
	unsigned long id = strtoul(f[1], NULL, 10);
	struct nsrec *n = NULL;
	for (struct list *l = b->g.nss.next; l != &b->g.nss; l = l->next) {
		struct ns *ns = list_entry(l, struct ns, link);
		if (id ? ns->id == id && ns != b->ns : ns == b->ns)
			n = id ? rec_find(ns) : ns_rec(b, ns);
	}
	if (!n || ns_token_room(n))
		return;
	n->tok[n->ntok++] = (struct token){
		.end = -1, .ino = (ino_t)strtoull(f[2], NULL, 10),
		.place = open_place(b, n->ns, f[5], f[6]),
		.member = atoi(f[3]) == 1, .uid = (uid_t)strtoul(f[4], NULL, 10),
	};
	ns_ntokens++;
}

/* STATE/ns emptied of the directories no copy is mounted on any more
 * (a copy undone by crash recovery, an end cut short): rmdir fails on a
 * mountpoint and on a directory that is not empty. */
static void sweep_dirs(const struct broker *b)
{
	char top[PATH_MAX];
	ns_dir(b, NULL, top, sizeof top);
	DIR *d = opendir(top);
	for (struct dirent *e; d && (e = readdir(d)); )
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
	if (d)
		closedir(d);
	rmdir(top);
}

/* After the mounts' propagation (state_load()): the namespaces, then
 * their tokens; the tokens nobody holds any more go at once. */
static void nsstate_load(struct broker *b, char **lines, size_t n)
{
	char *f[NS_FIELDS];
	for (size_t i = 0; i < n; i++)
		if (strncmp(lines[i], "ns ", 3) == 0 &&
		    split(lines[i], f, NS_FIELDS) == NS_FIELDS)
			restore_ns(b, f);
	for (size_t i = 0; i < n; i++)
		if (strncmp(lines[i], "nstoken ", 8) == 0 &&
		    split(lines[i], f, TOKEN_FIELDS) == TOKEN_FIELDS)
			restore_token(b, f);
	ns_orphans_drop(true);
	sweep_dirs(b);
}

/* The namespaces' part of the state (state.c knows no namespace). */
const struct state_part nsstate_part = {
	.put = nsstate_put, .has = nsstate_line, .load = nsstate_load,
};
