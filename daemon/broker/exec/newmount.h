/* newmount.h: a new filesystem's paths, between newmount.c (which finds
 * and looks them up) and newroot.c (which lays them out for the kernel). */
#ifndef LS_NEWMOUNT_H
#define LS_NEWMOUNT_H

#include "broker.h"

enum { MAXPATHS = 512 };       /* overlay takes 500 lower layers */

struct object {                /* something a caller's path names */
	int fd;                /* O_PATH, from resolve() */
	char *where;           /* its path in NEWROOT, malloc'ed */
};

struct ref {                   /* one path of the request */
	char *path;            /* as the caller spelled it, unescaped */
	size_t obj;
	size_t off, len;       /* where in the source or data */
	bool in_data;
	bool placed;           /* NEWROOT resolves path to obj as spelled */
};

struct newreq {
	const char *source, *data;
	struct object obj[MAXPATHS];
	size_t nobj;
	struct ref ref[MAXPATHS];
	size_t nref;
	int tdir;              /* NEWROOT/.t, beneath what is mounted there */
};

/* Binds the objects into NEWROOT/.o and makes each path lead there. */
int newroot_layout(struct request *r, struct newreq *q);
/* Takes away all of NEWROOT but .t and what is mounted on it. */
void newroot_clear(struct broker *b, struct newreq *q);

#endif
