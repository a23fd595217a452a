/* mountopt.h: mount(8)'s per-mount option words as mount(2) flags, for the
 * dry run's mount command and for jailtab lines alike. */
#ifndef LS_MOUNTOPT_H
#define LS_MOUNTOPT_H

#include <stdbool.h>

bool mount_option(const char *word, unsigned long *ms);
unsigned long mount_options(unsigned long ms, const char *list);

#endif
