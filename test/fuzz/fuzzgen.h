/* fuzzgen.h: the cases of wirefuzz (test/fuzz/wirefuzz.c): a seeded
 * generator of request messages, well-formed ones built with the codec and
 * their mutations, and of the descriptors that ride along.  Nothing here
 * touches the broker; wirefuzz.c sends and judges.
 */
#ifndef FUZZGEN_H
#define FUZZGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "libshare_proto.h"

/* One case is replayed from (seed, index) alone: every random choice of
 * case K comes from a generator seeded with both. */
struct rng {
	uint64_t s;
};

void rng_seed(struct rng *g, uint64_t seed, uint64_t index);
uint64_t rng_next(struct rng *g);
/* 0 .. n-1 */
uint32_t rng_below(struct rng *g, uint32_t n);

/* The largest message the fuzzer sends: past the broker's limit, within a
 * default socket buffer (a larger one fails at sendmsg, not at the broker). */
#define FZ_MSG_MAX (LS_REQUEST_MAX + 8192)

struct fz_msg {
	unsigned char b[FZ_MSG_MAX];
	size_t n;
};

/* Words the fields are made of: paths that exist or not, inside and
 * outside the sandbox, file system types and mount data.  fz_dict_add
 * adds the caller's (the sandbox's own paths). */
void fz_dict_add(const char *word);
/* A thread the requests' tid field may name (the process's own included);
 * other tids are random. */
void fz_tid_add(uint32_t tid);
/* Adds the process's own tid and a second thread's, whose cwd is "/" (of
 * the process's root) while the process's stays; returns that cwd (an
 * O_PATH descriptor, for what relative paths name from there), or -1. */
int fz_threads(void);
/* CLOCK_MONOTONIC in seconds. */
double fz_now(void);

/* A well-formed request of a random op (unknown ops included), built with
 * ls_req_encode. */
void fz_valid(struct rng *g, struct fz_msg *m);
/* One random mutation of m: a header field, a length, a NUL, truncation,
 * extension, byte flips. */
void fz_mutate(struct rng *g, struct fz_msg *m);
/* Random bytes, sometimes behind a valid header. */
void fz_random(struct rng *g, struct fz_msg *m);

/* Descriptors of every kind to attach: up to max of them in fds, the
 * number returned; a copy of the connection itself may be among them.
 * The caller closes them all with fz_fds_close once sent. */
int fz_fds(struct rng *g, int conn, int *fds, int max);
void fz_fds_close(const int *fds, int n);

#endif
