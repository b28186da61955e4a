#ifndef IMAGERY_MALLOC_COUNTS_H
#define IMAGERY_MALLOC_COUNTS_H

#include <stddef.h>

/* The C library allocator's own counts: bytes the program holds (heap and mmapped blocks) and bytes
 * it has freed that the allocator keeps for reuse. Returns 0 with glibc (mallinfo2), -1 elsewhere. */
int imagery_malloc_counts(size_t *in_use, size_t *kept_free);

#endif
