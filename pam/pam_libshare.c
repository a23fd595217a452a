/* pam_libshare.c: the PAM side of pam_libshare (pamls.h, and
 * man/pam_libshare.8).
 *
 * open_session: the user from PAM_USER and the passwd database, the
 * lines of the configuration that name that user (none: nothing to do),
 * a token of the namespace the process is in (none: no broker
 * answers), then the namespace.  A namespace half made is left at once,
 * so the session is refused whole.  close_session: the process goes
 * back to where it came from with that token, so that the session's
 * namespace lives only as long as the session's own processes, and the
 * broker frees it after the last.
 */
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <security/pam_ext.h>
#include <security/pam_modules.h>
#include <security/pam_modutil.h>
#include "pamls.h"

#ifndef PAMLS_CONFIG
#define PAMLS_CONFIG "/etc/libshare/namespace.conf"
#endif
#ifndef PAMLS_SHIM
#define PAMLS_SHIM "/usr/lib/libshare/libshare.so"
#endif

#define DATA_NAME "pam_libshare_origin"

struct opts {
	const char *config, *shim;
	bool broker_down_open;
	bool debug;
};

/* What the session keeps for close_session. */
struct origin {
	int fd;                 /* a token of the namespace left */
	struct shimcalls calls;
};

static int parse_opts(pam_handle_t *pamh, int argc, const char **argv,
		      struct opts *o)
{
	*o = (struct opts){ PAMLS_CONFIG, PAMLS_SHIM, false, false };
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (strncmp(a, "config=", 7) == 0 && a[7] == '/')
			o->config = a + 7;
		else if (strncmp(a, "shim=", 5) == 0 && a[5] == '/')
			o->shim = a + 5;
		else if (strcmp(a, "broker_down=closed") == 0)
			o->broker_down_open = false;
		else if (strcmp(a, "broker_down=open") == 0)
			o->broker_down_open = true;
		else if (strcmp(a, "debug") == 0)
			o->debug = true;
		else {
			pam_syslog(pamh, LOG_ERR, "unknown or malformed option "
				   "'%s': session refused", a);
			return -1;
		}
	}
	return 0;
}

static void user_free(struct nsc_user *u)
{
	free(u->name);
	free(u->home);
	free(u->groups);
}

/* The name must be one path name: instances are named after it. */
static int get_user(pam_handle_t *pamh, struct nsc_user *u)
{
	const char *name = NULL;
	struct passwd *pw;
	int n = 0;
	*u = (struct nsc_user){ 0 };
	if (pam_get_item(pamh, PAM_USER, (const void **)&name) != PAM_SUCCESS ||
	    !name || !(pw = pam_modutil_getpwnam(pamh, name))) {
		pam_syslog(pamh, LOG_ERR, "unknown user '%s': session refused",
			   name ? name : "");
		return -1;
	}
	if (strchr(pw->pw_name, '/') || strcmp(pw->pw_name, ".") == 0 ||
	    strcmp(pw->pw_name, "..") == 0 || !pw->pw_dir) {
		pam_syslog(pamh, LOG_ERR, "user name '%s' cannot name an "
			   "instance: session refused", pw->pw_name);
		return -1;
	}
	getgrouplist(pw->pw_name, pw->pw_gid, NULL, &n);
	u->name = strdup(pw->pw_name);
	u->home = strdup(pw->pw_dir);
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	u->groups = calloc((size_t)n + 1, sizeof *u->groups);
	u->ngroups = n;
	if (!u->name || !u->home || !u->groups ||
	    getgrouplist(pw->pw_name, pw->pw_gid, u->groups, &u->ngroups) < 0) {
		pam_syslog(pamh, LOG_ERR, "out of memory");
		user_free(u);
		return -1;
	}
	return 0;
}

static void origin_cleanup(pam_handle_t *pamh, void *data, int status)
{
	struct origin *o = data;
	(void)pamh;
	(void)status;
	if (o) {
		close(o->fd);
		free(o);
	}
}

/* No broker: the session is refused, or goes on without a namespace,
 * as broker_down says. */
static int broker_down(pam_handle_t *pamh, const struct opts *o)
{
	pam_syslog(pamh, LOG_ERR, "no libshare broker answers (is "
		   "sharebrokerd running?): %s (broker_down=%s)",
		   o->broker_down_open ? "the session goes on without a "
		   "namespace of its own" : "session refused",
		   o->broker_down_open ? "open" : "closed");
	return o->broker_down_open ? PAM_IGNORE : PAM_SESSION_ERR;
}

/* The namespace for u, entered; its origin kept for close_session. */
static int enter(pam_handle_t *pamh, const struct opts *o,
		 const struct nsc *c, const struct nsc_user *u)
{
	struct origin *org = calloc(1, sizeof *org);
	int err;
	if (!org || shimcalls_get(pamh, o->shim, &org->calls) < 0) {
		free(org);
		return PAM_SESSION_ERR;
	}
	if ((org->fd = ns_origin(&org->calls)) < 0) {
		free(org);
		return broker_down(pamh, o);
	}
	if ((err = ns_make(pamh, &org->calls, c, u, o->debug)) < 0) {
		if (err == -2)          /* half made: left at once */
			org->calls.setns(org->fd, CLONE_NEWNS);
		origin_cleanup(pamh, org, 0);
		return PAM_SESSION_ERR;
	}
	if (pam_set_data(pamh, DATA_NAME, org, origin_cleanup) != PAM_SUCCESS) {
		org->calls.setns(org->fd, CLONE_NEWNS);
		origin_cleanup(pamh, org, 0);
		return PAM_SESSION_ERR;
	}
	if (o->debug)
		pam_syslog(pamh, LOG_DEBUG, "%s: a namespace of its own, %zu "
			   "lines", u->name, c->n);
	return PAM_SUCCESS;
}

PAM_EXTERN int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc,
				   const char **argv)
{
	struct opts o;
	struct nsc_user u;
	struct nsc c;
	int rc;
	(void)flags;
	if (parse_opts(pamh, argc, argv, &o) < 0 || get_user(pamh, &u) < 0)
		return PAM_SESSION_ERR;
	if (nsc_load(pamh, o.config, &u, &c) < 0) {
		user_free(&u);
		return PAM_SESSION_ERR;
	}
	rc = PAM_SUCCESS;
	if (c.n)
		rc = enter(pamh, &o, &c, &u);
	else if (o.debug)
		pam_syslog(pamh, LOG_DEBUG, "no line of %s names %s", o.config,
			   u.name);
	nsc_free(&c);
	user_free(&u);
	return rc;
}

PAM_EXTERN int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc,
				    const char **argv)
{
	const void *data = NULL;
	const struct origin *org;
	struct opts o;
	int rc = PAM_SUCCESS;
	(void)flags;
	if (parse_opts(pamh, argc, argv, &o) < 0)
		return PAM_SESSION_ERR;
	if (pam_get_data(pamh, DATA_NAME, &data) != PAM_SUCCESS || !data)
		return PAM_SUCCESS;         /* no namespace of ours */
	org = data;
	if (org->calls.setns(org->fd, CLONE_NEWNS) < 0) {
		pam_syslog(pamh, LOG_ERR, "cannot leave the session's "
			   "namespace: %m");
		rc = PAM_SESSION_ERR;
	} else if (o.debug) {
		pam_syslog(pamh, LOG_DEBUG, "left the session's namespace");
	}
	pam_set_data(pamh, DATA_NAME, NULL, NULL);   /* closes the token */
	return rc;
}
