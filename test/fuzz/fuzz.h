/* fuzz.h: what every fuzz target (test/fuzz/fuzz-*.c) shares.
 *
 * A target is one function, LLVMFuzzerTestOneInput(), built two ways
 * (targets.am): with clang and libFuzzer for `make fuzz`, which mutates
 * inputs for as long as it is given, and with the ordinary compiler and
 * replay.c's main() for make check, which runs the target once on every
 * file of its corpus (test/fuzz/corpus/NAME/): the seeds, and every input
 * that once found a bug, kept as its regression test.
 *
 * A target fails by crashing: a sanitizer's report, or FUZZ_ASSERT() on a
 * property the code under test promises (a decoded message encodes back
 * to the same bytes, the engine's invariants hold).
 */
#ifndef LS_FUZZ_H
#define LS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional: once, before the first input. */
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_ASSERT(c) do {						\
	if (!(c)) {							\
		fprintf(stderr, "%s:%d: fuzz property broken: %s\n",	\
			__FILE__, __LINE__, #c);			\
		abort();						\
	}								\
} while (0)

#endif
