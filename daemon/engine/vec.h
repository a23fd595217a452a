/* vec.h: the engine's one growable array.  An array is three lvalues, the
 * elements v, their count n and the room cap (size_t), named after the
 * array (steps, nsteps, capsteps); growing it doubles, through alloc.c.
 *
 *   if ((err = VEC_PUSH(g->steps, g->nsteps, g->capsteps, s)))
 *           return err;          (-ENOMEM, the array as it was)
 */
#ifndef LS_VEC_H
#define LS_VEC_H

#include <errno.h>
#include <stddef.h>

void *vec_grow(void *v, size_t *cap, size_t need, size_t size);

/* Room for need elements: 0, or -ENOMEM with v and cap unchanged. */
#define VEC_RESERVE(v, cap, need) __extension__ ({ \
	int vr_ = 0; \
	if ((size_t)(need) > (cap)) { \
		__typeof__(v) vn_ = vec_grow((v), &(cap), (need), sizeof *(v)); \
		if (vn_) \
			(v) = vn_; \
		else \
			vr_ = -ENOMEM; \
	} \
	vr_; })

/* Append x: 0, or -ENOMEM with the array unchanged. */
#define VEC_PUSH(v, n, cap, x) __extension__ ({ \
	int vp_ = VEC_RESERVE(v, cap, (n) + 1); \
	if (!vp_) /* -fanalyzer: v is NULL only while cap is 0, and then \
		     VEC_RESERVE() made it non-NULL or failed */ \
		(v)[(n)++] = (x); \
	vp_; })

#endif
