#include "malloc_counts.h"

#include <stdlib.h> /* glibc: defines __GLIBC__ (features.h) */

#if defined(__GLIBC__)
#include <malloc.h>
#endif

int imagery_malloc_counts(size_t *in_use, size_t *kept_free) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 info = mallinfo2();
    *in_use = info.uordblks + info.hblkhd;
    *kept_free = info.fordblks;
    return 0;
#else
    *in_use = 0;
    *kept_free = 0;
    return -1;
#endif
}
