/* jailtab.h: jails declared in files (man/jailtab.5), and sharectl's
 * apply and check commands that read them.
 *
 * A jailtab is an fstab(5): one mount per line, every path a host path, so
 * that the same file also works with LD_PRELOAD=libshare.so mount -a -T.
 * The jail a line belongs to is its x-jail=DIR option, which util-linux,
 * like every x- option, keeps from the kernel.
 *
 * Error convention: 0 or -errno; the parser reports file:line: messages on
 * the FILE * it is given and counts them.
 */
#ifndef LS_JAILTAB_H
#define LS_JAILTAB_H

#include <stdbool.h>
#include <stdio.h>
#include "mtab.h"

/* What a line asks for. */
enum jt_kind {
	JT_NEW,        /* a new filesystem of TYPE from SOURCE at TARGET */
	JT_BIND,       /* bind or rbind the host path SOURCE at TARGET */
	JT_CHANGE,     /* SOURCE "none", no bind: only change TARGET's
			  propagation (the mount there must exist) */
};

/* The propagation words in the order written: util-linux applies each as
 * its own mount(2) call, MS_REC for the r- forms. */
#define JT_MAXPROP 4

struct jt_entry {
	const char *file;
	unsigned line;
	char *source, *target, *type;
	char *jail;            /* x-jail=DIR, or NULL: the host's */
	enum jt_kind kind;
	bool recursive;        /* rbind */
	bool nofail;           /* a failure is a warning */
	bool noauto;           /* checked, not applied (as mount -a) */
	unsigned long flags;   /* LS_MS_* per-mount flags (ro, nosuid, ...) */
	char *data;            /* the filesystem's own options, or NULL */
	unsigned long prop[JT_MAXPROP];   /* LS_MS_SHARED... | LS_MS_REC */
	int nprop;
};

struct jt_tab {
	struct jt_entry *v;
	size_t n, cap;
	unsigned errors;       /* lines refused, each reported */
	const char *root;      /* --jail DIR: targets are inside DIR, and
				  every line belongs to jail DIR */
};

/* jailtab.c */
int jt_read(struct jt_tab *t, const char *path, FILE *err);
int jt_read_dir(struct jt_tab *t, const char *dir, FILE *err);
void jt_finish(struct jt_tab *t, FILE *err);
void jt_free(struct jt_tab *t);
const char *jt_prop_name(unsigned long prop);

/* apply.c: one way to reach mounts, the broker's or the engine's */
struct mcall {
	const char *source, *target, *type, *data;
	unsigned long flags;
};

struct backend {
	int (*table)(void *ctx, char **text);          /* host mountinfo */
	int (*mount)(void *ctx, const struct jt_entry *e,
		     const struct mcall *c);           /* 0 or -errno */
	void (*note)(void *ctx, FILE *out);            /* after a call's line */
	void *ctx;
	const char *verb;      /* "mounted", "would mount" */
};

int jt_apply(const struct jt_tab *t, const struct backend *b, FILE *out,
	     unsigned *changes);

/* apply_broker.c, apply_dry.c */
int broker_call(const char *addr, unsigned op, const char *const f[4],
		unsigned long arg, char *text, size_t *len, int *pass);
int broker_backend(struct backend *b, const char *addr);
int dry_backend(struct backend *b, const char *addr);
void dry_backend_free(struct backend *b);

/* jailtab_cmd.c: sharectl apply|check, or -1 when the command is another */
int jailtab_command(int argc, char **argv);

#endif
