/* tab.h: the served mount tables' room (daemon/broker/tab/): the broker's
 * own FUSE filesystem, from which callers read mount tables that stay
 * live (fusetab.c, the FUSE thread), and the main thread's side of it
 * (tabserve.c): renderings, change events, and the kernel's table
 * followed when it changes behind the broker's back.
 *
 * May call persistence (persist/: a drift's save), the hold (hold/: the
 * table's sync) and the ground (base/).
 */
#ifndef LS_TAB_H
#define LS_TAB_H

#include "broker.h"

struct pollfd;
void fusetab_clean(const char *state_dir);
void fusetab_start(struct broker *b);
int fusetab_open(struct broker *b, struct loc root, bool info, uid_t uid,
		 int *pass);
void fusetab_changed(struct broker *b);
void fusetab_touched(struct broker *b);
size_t tab_loop_fds(struct broker *b, struct pollfd *p);
void follow_drift(struct broker *b);
void tab_loop_events(struct broker *b, const struct pollfd *p, size_t n);

#endif
