/* oom-dump.h: the whole graph as text (oom-dump.c), malloc'ed: every
 * namespace's mountinfo, every mount with its links in order, the
 * creation order, the id pools, the counters, and an empty journal. */
#ifndef OOM_DUMP_H
#define OOM_DUMP_H

struct dry;
char *graph_dump(struct dry *d);

#endif
