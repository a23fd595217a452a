/* list.h: an intrusive circular doubly linked list, in the kernel's shape.
 *
 * Every pointer write goes through jset() so that an open plan can undo it
 * (see journal.c); outside a plan jset() is a plain store.
 */
#ifndef LS_LIST_H
#define LS_LIST_H

#include <stddef.h>

struct list { struct list *next, *prev; };

#define container_of(p, type, member) \
	((type *)((char *)(p) - offsetof(type, member)))
#define list_entry(p, type, member) container_of(p, type, member)

static inline void list_init(struct list *l) { l->next = l->prev = l; }
static inline int list_empty(const struct list *l) { return l->next == l; }

#endif
