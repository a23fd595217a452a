/* persist.h: the persistence room (daemon/broker/persist/): what must
 * survive the broker.  The state (state.c, stload.c), kept as keyed lines
 * in a snapshot and a journal (stcache.c), each request saving what it
 * changed (stdelta.c); the record of a plan being carried out (intent.c)
 * and the recovery of one a dead broker left (recover.c, recmove.c); the
 * state directory's layout and sweep (statedir.c).
 *
 * May call the hold (hold/) and the ground (base/).  The namespaces, a
 * room above, keep a part of the state through struct state_part: the
 * state writes and hands back their lines and knows nothing of them.
 */
#ifndef LS_PERSIST_H
#define LS_PERSIST_H

#include <stdio.h>
#include "broker.h"

/* state.c */
int state_full(struct broker *b);
void state_ns_ops(struct broker *b, FILE *f);
int state_load(struct broker *b);
int kid_of(const struct broker *b, const struct mount *m);
bool has_line(const struct broker *b, const struct mount *m);
bool put_mount(const struct broker *b, FILE *f, const struct mount *m,
	       bool graph);
bool put_children_of(const struct broker *b, FILE *f, const struct mount *m,
		     const char *prefix);

/* stload.c */
int state_ordered(struct broker *b, FILE *f);

/* stdelta.c */
int state_delta(struct broker *b, bool graph, char **text, size_t *len);
int state_save(struct broker *b);

/* stcache.c */
/* A part of the state that a room above keeps (the namespaces',
 * ns/nsstate.c): its lines written after pre, whether a line is one of
 * them, and its lines handed back at load.  Set once, at start. */
struct state_part {
	void (*put)(struct broker *b, FILE *f, const char *pre);
	bool (*has)(const char *line);
	void (*load)(struct broker *b, char **lines, size_t n);
};
void state_part_set(const struct state_part *p);
bool state_part_line(const char *line);
void state_part_put(struct broker *b, FILE *f, const char *pre);
void state_part_load(struct broker *b, char **lines, size_t n);
const struct stline *cache_get(const struct stcache *c, const char *key);
int cache_apply(struct stcache *c, const char *body, size_t len);
void cache_clear(struct stcache *c);
int cache_snapshot(struct broker *b);
void state_close(struct broker *b);
int cache_read_snapshot(struct broker *b);
int journal_append(struct broker *b, const char *body, size_t len,
		   unsigned long long serial);
int journal_read(struct broker *b, bool apply);
bool journal_full(const struct broker *b);

/* statedir.c */
int statedir_prepare(struct broker *b);
void statedir_set_aside(const struct broker *b, const char *why);
int statedir_places(struct broker *b);
/* STATE/ns/PID.ID, a namespace's root's place; STATE/ns with ns NULL */
int ns_dir(const struct broker *b, const struct ns *ns, char *buf,
	   size_t size);

/* intent.c */
int intent_begin(struct broker *b);
void intent_step(struct broker *b, const struct step *s, char what,
		 const struct handle *h);
int intent_aside(struct broker *b, const struct mount *m, off_t *slot);
void intent_back(struct broker *b, off_t slot);
int intent_pending(struct broker *b, const struct step *s, int top,
		   dev_t dev);
void intent_mark(struct broker *b, const struct step *s, char what,
		 int kid, dev_t dev);
int intent_flush(struct broker *b);
bool intent_marked(const struct broker *b, const struct step *s, char what);
void intent_end(struct broker *b, bool saved);
bool plan_undoable(const struct graph *g);

/* recover.c, recmove.c */
int intent_recover(struct broker *b);
int walk_path(const char *path);  /* O_PATH, following no symlink */

#endif
