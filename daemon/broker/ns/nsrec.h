/* nsrec.h: what the broker keeps of each mount namespace (ns.c makes and
 * enters them, nslife.c frees them, nsstate.c saves and restores them). */
#ifndef LS_NSREC_H
#define LS_NSREC_H

#include <stdbool.h>
#include <time.h>
#include <sys/types.h>
#include "broker.h"

/* The numbers of copies, above any the kernel gives out in practice (its
 * own start at 0xF0000000): mnt:[N] differs between namespaces. */
#define NS_NUM_BASE 0xFFF00000ull

struct token {                 /* one descriptor handed out for a namespace */
	int end;               /* the broker's end of the pair; -1: a token
				  an earlier broker made (nsstate.c) */
	ino_t ino;             /* the caller's end, as /proc/PID/fd shows it */
	int place;             /* O_PATH: where setns re-roots to */
	bool member;           /* held by a process in the namespace */
	uid_t uid;             /* whom it was made for (TOKENS_PER_UID) */
};

struct nsrec {
	struct ns *ns;
	unsigned long long num;  /* mnt:[N] */
	int root;              /* O_PATH: the namespace's root place */
	struct token *tok;
	size_t ntok, cap;
	bool dying;            /* no token left: the roots are read */
	time_t held;           /* when an earlier broker's token was last
				  found held (nslife.c) */
	struct nsrec *next;
};

extern struct nsrec *ns_recs;  /* the broker's own namespace's too */
extern unsigned ns_ntokens, ns_nrecs;

/* ns.c */
struct nsrec *ns_rec(struct broker *b, struct ns *ns);
int ns_token_room(struct nsrec *n);

/* nslife.c */
int ns_dir(const struct broker *b, const struct ns *ns, char *buf,
	   size_t size);
int ns_teardown(struct broker *b, struct ns *ns);
void ns_watch(int end);
void ns_token_drop(struct nsrec *n, size_t i);
void ns_orphans_drop(bool all);
void ns_each_process(struct broker *b,
		     void (*fn)(void *ctx, pid_t pid, const struct ns *ns),
		     void *ctx);

#endif
