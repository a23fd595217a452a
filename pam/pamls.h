/* pamls.h: pam_libshare, the PAM session module that gives a login a
 * mount namespace of its own through the libshare broker (RFC Example 4
 * as an administrator sets it up).  man/pam_libshare.8 is its manual.
 *
 * Three rooms: nsconf.c reads the configuration (namespace.conf's
 * columns) and keeps the lines that name the session's user; nsmake.c
 * makes the namespace with the shim's unshare(2) and mount(2), and
 * safedir.c checks every directory it mounts on or from; pam_libshare.c
 * is the PAM side: options, the user, the entry points.
 *
 * Error convention: each function logs what went wrong where it knows
 * the most (pam_syslog, with the file, line or path) and returns -1; the
 * entry points turn that into the PAM answer.
 */
#ifndef PAMLS_H
#define PAMLS_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <security/pam_modules.h>

/* What a line does to its directory in the session. */
enum nsc_method {
	NSC_SLAVE,      /* the session receives the system's mounts there */
	NSC_SHARED,     /* as copied: a peer of the system's, both ways */
	NSC_PRIVATE,    /* neither way */
	NSC_TMPFS,      /* a tmpfs of the session's own on it */
	NSC_USER,       /* INSTANCE followed by the user name, bound on it */
};

struct nsc_line {
	char *dir;              /* absolute, $USER and $HOME expanded */
	char *inst;             /* user: the prefix; tmpfs: options; or NULL */
	enum nsc_method method;
	int lineno;
};

/* The lines that apply to one user, in the file's order. */
struct nsc {
	struct nsc_line *v;
	size_t n;
};

/* The session's user as the passwd and group databases say, never as
 * the environment does: nobody chooses another user's lines. */
struct nsc_user {
	char *name, *home;
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	int ngroups;
};

int nsc_load(pam_handle_t *pamh, const char *path, const struct nsc_user *u,
	     struct nsc *c);
void nsc_free(struct nsc *c);
bool nsc_is_propagation(enum nsc_method m);

/* The shim's entry points the module calls: the process's own shim when
 * it loads one (LD_PRELOAD, a jail's /etc/ld.so.preload), else one loaded
 * for the module alone. */
struct shimcalls {
	int (*unshare)(int);
	int (*setns)(int, int);
	int (*mount)(const char *, const char *, const char *, unsigned long,
		     const void *);
	int (*open)(const char *, int, ...);
	FILE *(*fopen)(const char *, const char *);
};

int shimcalls_get(pam_handle_t *pamh, const char *path, struct shimcalls *s);
int ns_origin(const struct shimcalls *s);
int ns_make(pam_handle_t *pamh, const struct shimcalls *s,
	    const struct nsc *c, const struct nsc_user *u, bool debug);

/* safedir.c */
int safe_dir(pam_handle_t *pamh, const char *path, uid_t owner);
int safe_instance(pam_handle_t *pamh, const char *path,
		  const struct nsc_user *u);

#endif
