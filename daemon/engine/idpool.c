/* idpool.c: smallest-free ids for mounts and peer groups (semantics.md
 * 1.3, 1.4): a min-heap of the ids given back below next.  The heap always
 * has room for every id below next, so that giving an id back (at commit,
 * on undo) never allocates and cannot fail.
 */
#include "journal.h"

static void heap_push(struct idpool *p, unsigned id)
{
	size_t i = p->n++;
	while (i && p->heap[(i - 1) / 2] > id) {
		p->heap[i] = p->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	p->heap[i] = id;
}

static unsigned heap_pop(struct idpool *p)
{
	unsigned top = p->heap[0], last = p->heap[--p->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= p->n)
			break;
		if (c + 1 < p->n && p->heap[c + 1] < p->heap[c])
			c++;
		if (last <= p->heap[c])
			break;
		p->heap[i] = p->heap[c];
		i = c;
	}
	if (p->n)
		p->heap[i] = last;
	return top;
}

void idpool_init(struct idpool *p)
{
	*p = (struct idpool){ .next = 1 };
}

/* The smallest free id; -ENOMEM when a new one would leave the heap
 * without room to take it back. */
int id_get(struct idpool *p, unsigned *id)
{
	if (p->n) {
		*id = heap_pop(p);
		return 0;
	}
	if (VEC_RESERVE(p->heap, p->cap, p->next))
		return -ENOMEM;
	*id = p->next++;
	return 0;
}

void id_put(struct idpool *p, unsigned id)
{
	heap_push(p, id);
}

void idpool_free(struct idpool *p)
{
	free(p->heap);
	p->heap = NULL;
	p->n = p->cap = 0;
}
