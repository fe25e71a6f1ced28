/*
 * fuzz.h - what the libFuzzer harnesses of tests/fuzz share. Each harness
 * is one file fuzz-NAME.c defining LLVMFuzzerTestOneInput for one parser:
 * it feeds the input to the parser as the engine would, then checks the
 * parser's contract on what came back (return codes, ranges, invariants of
 * the output). A broken contract aborts through CHECK, which libFuzzer
 * reports as a crash with the input saved; memory errors, undefined
 * behaviour and leaks are the sanitizers' (the build has -Dfuzz=true).
 */
#ifndef PACKETFS_FUZZ_H
#define PACKETFS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Aborts with the failed condition when c is false. */
#define CHECK(c)                                                                   \
	do {                                                                       \
		if (!(c)) {                                                        \
			fprintf(stderr, "%s:%d: contract broken: %s\n", __FILE__, \
				__LINE__, #c);                                     \
			abort();                                                   \
		}                                                                  \
	} while (0)

/* A NUL-terminated copy of the input (NUL bytes inside stay), or NULL on
 * ENOMEM. Caller frees. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		return NULL;
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

#endif
