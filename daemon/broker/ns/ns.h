/* ns.h: the namespaces' room (daemon/broker/ns/): mount namespaces on a
 * kernel without them (issue 11).  Made and entered (ns.c), their life and
 * end (nslife.c), their part of the saved state (nsstate.c) and what
 * sharectl shows of them (nsshow.c).
 *
 * May call the executor (exec/: a namespace's copy and end are plans),
 * the served tables (tab/), persistence (persist/), resolution (resolve/:
 * the caller), the hold (hold/) and the ground (base/).
 */
#ifndef LS_NS_H
#define LS_NS_H

#include "broker.h"
#include "persist/persist.h"

/* ns.c */
int ns_unshare(struct request *r, int *pass);
int ns_setns(struct request *r, int fd, int *pass, int *old);
int ns_file(struct request *r, pid_t pid, bool number_only, int *pass,
	    unsigned long long *num);
int ns_pidfd(struct request *r, int fd, pid_t *pid);

/* nslife.c */
void ns_tick(struct broker *b);
void ns_end(struct broker *b, pid_t leaving);
int ns_wake_fd(void);

/* nsshow.c */
int pid_view(struct request *r, const char *pid, struct loc *out, char **buf);
int show_namespaces(struct request *r, char **text, int *ntext);

/* nsstate.c: the namespaces' part of the state (persist.h), handed to
 * it at start */
extern const struct state_part nsstate_part;

#endif
