/* jailtab.c: reading jailtab files (man/jailtab.5) into entries, with
 * every refusal reported as FILE:LINE: message.
 *
 * The fields are fstab(5)'s, with its octal escapes (\040 for a blank):
 *   SOURCE TARGET TYPE [OPTIONS [FREQ [PASSNO]]]
 * Options are util-linux's: the per-mount flags (the engine's flags.c), bind and
 * rbind, the propagation words, the userspace ones mount -a knows (noauto,
 * nofail, x-...), and x-jail=DIR; any other word is the filesystem's.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "engine.h"
#include "vec.h"
#include "jailtab.h"
#include "mount_abi.h"

static const struct { const char *name; unsigned long prop; } props[] = {
	{ "shared", LS_MS_SHARED }, { "slave", LS_MS_SLAVE },
	{ "private", LS_MS_PRIVATE }, { "unbindable", LS_MS_UNBINDABLE },
	{ "rshared", LS_MS_SHARED | LS_MS_REC },
	{ "rslave", LS_MS_SLAVE | LS_MS_REC },
	{ "rprivate", LS_MS_PRIVATE | LS_MS_REC },
	{ "runbindable", LS_MS_UNBINDABLE | LS_MS_REC },
};

/* What mount -a reads and keeps to itself: nothing for the kernel. */
static const char *const userspace[] = {
	"defaults", "auto", "user", "nouser", "users", "owner", "group",
	"_netdev", "nofail", "noauto",
};

const char *jt_prop_name(unsigned long prop)
{
	for (size_t i = 0; i < sizeof props / sizeof *props; i++)
		if (props[i].prop == prop)
			return props[i].name;
	return "?";
}

/* One refusal, counted; returns -EINVAL for the caller to pass on. */
static int refuse(struct jt_tab *t, FILE *err, const char *file,
		  unsigned line, const char *fmt, ...)
{
	va_list ap;
	fprintf(err, "%s:%u: ", file, line);
	va_start(ap, fmt);
	vfprintf(err, fmt, ap);
	va_end(ap);
	fputc('\n', err);
	t->errors++;
	return -EINVAL;
}

static bool digits(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

/* A path whose containment can be judged by its letters: absolute, with
 * no "." or ".." component. */
static bool plain_path(const char *p)
{
	if (p[0] != '/')
		return false;
	for (const char *c = p; (c = strchr(c, '/')); c++)
		if ((c[1] == '.' && (c[2] == '/' || !c[2])) ||
		    (c[1] == '.' && c[2] == '.' && (c[3] == '/' || !c[3])))
			return false;
	return true;
}

static int append_data(char **data, const char *word)
{
	size_t n = *data ? strlen(*data) : 0;
	char *d = realloc(*data, n + strlen(word) + 2);
	if (!d)
		return -ENOMEM;
	sprintf(d + n, "%s%s", n ? "," : "", word);
	*data = d;
	return 0;
}

/* One option word into e; 1 when it is the filesystem's. */
static int option(struct jt_entry *e, const char *w)
{
	for (size_t i = 0; i < sizeof props / sizeof *props; i++)
		if (strcmp(w, props[i].name) == 0) {
			if (e->nprop == JT_MAXPROP)
				return -E2BIG;
			e->prop[e->nprop++] = props[i].prop;
			return 0;
		}
	for (size_t i = 0; i < sizeof userspace / sizeof *userspace; i++)
		if (strcmp(w, userspace[i]) == 0) {
			e->nofail |= strcmp(w, "nofail") == 0;
			e->noauto |= strcmp(w, "noauto") == 0;
			return 0;
		}
	if (strncmp(w, "x-jail=", 7) == 0) {
		free(e->jail);
		return (e->jail = strdup(w + 7)) ? 0 : -ENOMEM;
	}
	if (strncmp(w, "x-", 2) == 0 || strncmp(w, "comment=", 8) == 0)
		return 0;
	if (strcmp(w, "rbind") == 0)
		e->recursive = true;
	if (strcmp(w, "rbind") == 0 || strcmp(w, "bind") == 0)
		e->kind = JT_BIND;
	else if (!mount_option(w, &e->flags))
		return 1;
	return 0;
}

/* The OPTIONS field into e, or a refusal naming the word. */
static int options(struct jt_tab *t, FILE *err, struct jt_entry *e,
		   char *list)
{
	char *save = NULL;
	for (char *w = strtok_r(list, ",", &save); w;
	     w = strtok_r(NULL, ",", &save)) {
		int r;
		if (strcmp(w, "remount") == 0 || strcmp(w, "move") == 0)
			return refuse(t, err, e->file, e->line, "%s: a "
				      "jailtab declares mounts; it cannot %s "
				      "one", w, w);
		if ((r = option(e, w)) == -E2BIG)
			return refuse(t, err, e->file, e->line, "more than %d "
				      "propagation options", JT_MAXPROP);
		if (r < 0 || (r == 1 && append_data(&e->data, w) < 0))
			return -ENOMEM;
	}
	return 0;
}

/* What the fields together must say; the refusal names the field. */
static int validate(struct jt_tab *t, FILE *err, struct jt_entry *e)
{
	const char *f = e->file;
	unsigned l = e->line;
	if (!plain_path(e->target))
		return refuse(t, err, f, l, "%s: the target must be an "
			      "absolute path without . or .. components",
			      e->target);
	if (e->jail && !plain_path(e->jail))
		return refuse(t, err, f, l, "x-jail=%s: the jail must be an "
			      "absolute path without . or .. components",
			      e->jail);
	/* a jail's line may only mount inside that jail: the file says
	 * which jail it configures, and a typo must not reach the host */
	if (e->jail && (strcmp(e->jail, "/") == 0 ||
			!mtab_under(e->target, e->jail)))
		return refuse(t, err, f, l, "%s: not inside its jail %s",
			      e->target, e->jail);
	if (e->kind == JT_BIND && !plain_path(e->source))
		return refuse(t, err, f, l, "%s: a bind's source must be an "
			      "absolute host path without . or ..", e->source);
	if (e->kind == JT_BIND && e->data)
		return refuse(t, err, f, l, "%s: not an option of a bind mount",
			      e->data);
	if (e->kind == JT_NEW && strcmp(e->source, "none") == 0 &&
	    strcmp(e->type, "none") == 0)
		e->kind = JT_CHANGE;
	if (e->kind == JT_CHANGE && (!e->nprop || e->flags || e->data))
		return refuse(t, err, f, l, "source and type \"none\" without "
			      "bind: only propagation options may follow");
	return 0;
}

/* With --jail DIR a line's target is a path inside the jail (as in
 * schroot's fstab): DIR/TARGET on the host, in jail DIR. */
static int rooted(const struct jt_tab *t, struct jt_entry *e)
{
	char *target;
	if (e->target[0] != '/' || e->jail)
		return 0;      /* validate() refuses them, naming the field */
	if (asprintf(&target, "%s%s", t->root, strcmp(e->target, "/") ?
		     e->target : "") < 0 || !(e->jail = strdup(t->root)))
		return -ENOMEM;
	free(e->target);
	e->target = target;
	return 0;
}

static void entry_free(struct jt_entry *e)
{
	free(e->source);
	free(e->target);
	free(e->type);
	free(e->jail);
	free(e->data);
}

/* One line of path; a comment or blank line adds nothing. */
static int parse_line(struct jt_tab *t, FILE *err, const char *path,
		      unsigned lineno, char *line)
{
	char *w[7], *save = NULL;
	int n = 0;
	for (char *s = strtok_r(line, " \t\r\n", &save); s && n < 7;
	     s = strtok_r(NULL, " \t\r\n", &save))
		mtab_unescape(w[n++] = s);
	if (n == 0 || w[0][0] == '#')
		return 0;
	/* a refused line is counted and reading goes on */
	if (n < 3 || n > 6) {
		refuse(t, err, path, lineno, "%d fields; expected SOURCE "
		       "TARGET TYPE [OPTIONS [FREQ [PASSNO]]]", n);
		return 0;
	}
	for (int i = 4; i < n; i++)
		if (!digits(w[i])) {
			refuse(t, err, path, lineno, "%s: %s must be a number",
			       w[i], i == 4 ? "FREQ" : "PASSNO");
			return 0;
		}
	struct jt_entry e = { .file = path, .line = lineno, .kind = JT_NEW };
	e.source = strdup(w[0]);
	e.target = strdup(w[1]);
	e.type = strdup(w[2]);
	int r = !e.source || !e.target || !e.type ? -ENOMEM : 0;
	if (!r && n > 3)
		r = options(t, err, &e, w[3]);
	if (!r && t->root)
		r = rooted(t, &e);
	if (!r)
		r = validate(t, err, &e);
	if (!r)
		r = VEC_PUSH(t->v, t->n, t->cap, e);
	if (r) {
		entry_free(&e);
		return r == -EINVAL ? 0 : -ENOMEM;
	}
	return 0;
}

/* The lines of path added to t; -errno when it cannot be read.  path must
 * outlive t (entries point to it). */
int jt_read(struct jt_tab *t, const char *path, FILE *err)
{
	FILE *in = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	int r = 0;
	if (!in)
		return -errno;
	while (!r && getline(&line, &cap, in) >= 0)
		r = parse_line(t, err, path, ++lineno, line);
	if (!r && ferror(in))
		r = -EIO;
	free(line);
	fclose(in);
	return r;
}

static int is_tab(const struct dirent *d)
{
	size_t n = strlen(d->d_name);
	return d->d_name[0] != '.' && n > 4 &&
	       strcmp(d->d_name + n - 4, ".tab") == 0;
}

/* Every DIR/NAME.tab, in the C locale's order (as run-parts would). */
int jt_read_dir(struct jt_tab *t, const char *dir, FILE *err)
{
	struct dirent **names;
	int r = 0, n = scandir(dir, &names, is_tab, alphasort);
	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		char *path = NULL;
		if (!r && asprintf(&path, "%s/%s", dir, names[i]->d_name) < 0)
			r = -ENOMEM;
		/* path is kept: the entries name their file by it */
		if (!r && (r = jt_read(t, path, err)) < 0)
			fprintf(err, "%s: %s\n", path, strerror(-r));
		free(names[i]);
	}
	free(names);
	return r;
}

/* Checks across files: one mount per target, or a second apply would find
 * the later line's mount on top of the earlier one's and call it wrong. */
void jt_finish(struct jt_tab *t, FILE *err)
{
	for (size_t i = 0; i < t->n; i++)
		for (size_t j = 0; j < i; j++)
			if (t->v[i].kind != JT_CHANGE &&
			    t->v[j].kind != JT_CHANGE &&
			    strcmp(t->v[i].target, t->v[j].target) == 0) {
				refuse(t, err, t->v[i].file, t->v[i].line,
				       "%s: already mounted by %s:%u",
				       t->v[i].target, t->v[j].file,
				       t->v[j].line);
				break;
			}
}

void jt_free(struct jt_tab *t)
{
	for (size_t i = 0; i < t->n; i++)
		entry_free(&t->v[i]);
	free(t->v);
	*t = (struct jt_tab){ 0 };
}
