/* mtnorm_line.c: one mountinfo line of mtnorm's input (mtnorm.c): parsed,
 * unescaped, and its parts printed with the sandbox written "B". */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mtnorm.h"

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		perror("mtnorm");
		exit(1);
	}
	return p;
}

/* Undo the kernel's \ooo escaping (space, tab, newline, backslash). */
char *unescape(const char *s)
{
	char *out = xrealloc(NULL, strlen(s) + 1), *o = out;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*o++ = (s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0');
			s += 4;
		} else {
			*o++ = *s++;
		}
	}
	*o = '\0';
	return out;
}

/* Print S escaped as the kernel does, so one mount stays one line. */
void put_escaped(const char *s)
{
	for (; *s; s++) {
		if (strchr(" \t\n\\", *s))
			printf("\\%03o", (unsigned char)*s);
		else
			putchar(*s);
	}
}

bool under_base(const char *path)
{
	size_t n = base ? strlen(base) : 0;

	return n && strncmp(path, base, n) == 0 &&
	       (path[n] == '\0' || path[n] == '/');
}

/* PATH with the base path, or a literal "$B", written as "B". */
void put_path(const char *path)
{
	if (under_base(path))
		path += strlen(base) - 1;
	else if (strncmp(path, "$B", 2) == 0)
		path += 1;
	else {
		put_escaped(path);
		return;
	}
	putchar('B');
	put_escaped(path + 1);
}

/*
 * Per-mount options, then "sb:" and the superblock's generic flags: rw or
 * ro (5.1 item 8 remounts a jail's root read-only), sync, dirsync, mand,
 * lazytime.  The rest of field 11 is each filesystem's own (size=,
 * inode64...) and not modelled.
 */
char *sb_flags(const char *opts, const char *super)
{
	static const char *const generic[] = { "sync", "dirsync", "mand",
					       "lazytime" };
	char *copy = strdup(super), *save = NULL, *out;
	char *ro = strtok_r(copy, ",", &save);
	out = xrealloc(NULL, strlen(opts) + strlen(super) + 8);
	sprintf(out, "%s sb:%s", opts, ro && strcmp(ro, "ro") == 0 ? "ro" : "rw");
	for (char *o = strtok_r(NULL, ",", &save); o;
	     o = strtok_r(NULL, ",", &save))
		for (size_t i = 0; i < sizeof generic / sizeof *generic; i++)
			if (strcmp(o, generic[i]) == 0)
				strcat(strcat(out, ","), o);
	free(copy);
	return out;
}

/*
 * Parse one mountinfo line (semantics.md 1.5.1) into M. Returns false if
 * the line is not mountinfo (it is then printed as it is).
 */
bool parse_mountinfo(char *line, struct mnt *m)
{
	char *f[64], *save = NULL, *tok;
	int n = 0, sep = -1, i;
	size_t optlen = 0;

	for (tok = strtok_r(line, " ", &save); tok && n < 64;
	     tok = strtok_r(NULL, " ", &save))
		f[n++] = tok;
	for (i = 6; i < n; i++)
		if (strcmp(f[i], "-") == 0) {
			sep = i;
			break;
		}
	if (sep < 0 || sep + 2 >= n)
		return false;
	m->id = strtol(f[0], NULL, 10);
	m->parent = strtol(f[1], NULL, 10);
	m->root = unescape(f[3]);
	m->mp = unescape(f[4]);
	m->opts = sb_flags(f[5], sep + 3 < n ? f[sep + 3] : "rw");
	m->fstype = unescape(f[sep + 1]);
	m->src = unescape(f[sep + 2]);
	for (i = 6; i < sep; i++)
		optlen += strlen(f[i]) + 1;
	m->optional = xrealloc(NULL, optlen + 1);
	m->optional[0] = '\0';
	for (i = 6; i < sep; i++) {
		strcat(m->optional, " ");
		strcat(m->optional, f[i]);
	}
	m->printed = false;
	return true;
}

void free_mnt(struct mnt *m)
{
	free(m->root);
	free(m->mp);
	free(m->opts);
	free(m->optional);
	free(m->fstype);
	free(m->src);
}

/* Sort key: mountpoint, then the rest of the printed line, then input order. */
