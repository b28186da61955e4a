#include "icc_transform.h"

#include <lcms2.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// The cache: a few transforms, most recently used first, each with a copy of the profiles it was
// built from (a hit compares them byte for byte: no checksum can make two profiles meet). An entry
// in use by another thread when it is evicted is deleted by the last one to let it go.
enum { CACHE_SIZE = 16 };

typedef struct entry {
    unsigned char *key;  // profile bytes, then destination bytes
    size_t profile_length, destination_length;
    int bands;
    cmsHTRANSFORM transform;
    int users;
    int evicted;
} entry;

static entry *cache[CACHE_SIZE];
static int cache_count;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static int matches(const entry *e, const void *profile, size_t profile_length, const void *destination, size_t destination_length,
                   int bands) {
    return e->bands == bands && e->profile_length == profile_length && e->destination_length == destination_length
        && memcmp(e->key, profile, profile_length) == 0 && memcmp(e->key + profile_length, destination, destination_length) == 0;
}

static void delete_entry(entry *e) {
    cmsDeleteTransform(e->transform);
    free(e->key);
    free(e);
}

// The entry for these profiles, moved to the front and marked in use; NULL when there is none.
static entry *find(const void *profile, size_t profile_length, const void *destination, size_t destination_length, int bands) {
    for (int i = 0; i < cache_count; i++) {
        entry *e = cache[i];
        if (!matches(e, profile, profile_length, destination, destination_length, bands)) continue;
        memmove(&cache[1], &cache[0], (size_t)i * sizeof(entry *));
        cache[0] = e;
        e->users++;
        return e;
    }
    return NULL;
}

static void release(entry *e) {
    pthread_mutex_lock(&cache_lock);
    int last = --e->users == 0 && e->evicted;
    pthread_mutex_unlock(&cache_lock);
    if (last) delete_entry(e);
}

static cmsHTRANSFORM build(const void *profile, size_t profile_length, const void *destination, size_t destination_length, int bands) {
    if (profile_length > UINT32_MAX || destination_length > UINT32_MAX) return NULL;
    cmsHPROFILE in = cmsOpenProfileFromMem(profile, (cmsUInt32Number)profile_length);
    cmsHPROFILE out = cmsOpenProfileFromMem(destination, (cmsUInt32Number)destination_length);
    cmsHTRANSFORM transform = NULL;
    if (in && out && cmsGetColorSpace(in) == cmsSigRgbData && cmsGetColorSpace(out) == cmsSigRgbData) {
        // RGBA: lcms copies the extra channel through untouched; no cache, so threads can share it.
        cmsUInt32Number format = bands == 4 ? TYPE_RGBA_8 : TYPE_RGB_8;
        cmsUInt32Number flags = cmsFLAGS_NOCACHE | (bands == 4 ? cmsFLAGS_COPY_ALPHA : 0);
        transform = cmsCreateTransform(in, format, out, format, INTENT_RELATIVE_COLORIMETRIC, flags);
    }
    if (in) cmsCloseProfile(in);
    if (out) cmsCloseProfile(out);
    return transform;
}

int imagery_icc_transform_rgb8(const void *profile, size_t profile_length, const void *destination, size_t destination_length,
                               unsigned char *pixels, size_t count, int bands, int *built) {
    if (built) *built = 0;
    if (!profile || !destination || profile_length == 0 || destination_length == 0 || (bands != 3 && bands != 4)) return -1;
    if (count > 0 && !pixels) return -1;

    pthread_mutex_lock(&cache_lock);
    entry *e = find(profile, profile_length, destination, destination_length, bands);
    pthread_mutex_unlock(&cache_lock);

    if (!e) {
        // Built outside the lock (milliseconds); two threads may build the same one at once, and the
        // second to finish keeps the first's.
        cmsHTRANSFORM transform = build(profile, profile_length, destination, destination_length, bands);
        if (!transform) return -1;
        if (built) *built = 1;
        entry *made = calloc(1, sizeof(entry));
        unsigned char *key = malloc(profile_length + destination_length);
        if (!made || !key) {
            free(made);
            free(key);
            cmsDeleteTransform(transform);
            return -1;
        }
        memcpy(key, profile, profile_length);
        memcpy(key + profile_length, destination, destination_length);
        *made = (entry){key, profile_length, destination_length, bands, transform, 1, 0};
        entry *evicted = NULL;
        pthread_mutex_lock(&cache_lock);
        e = find(profile, profile_length, destination, destination_length, bands);
        if (!e) {
            if (cache_count == CACHE_SIZE) {
                evicted = cache[--cache_count];
                evicted->evicted = 1;
                if (evicted->users > 0) evicted = NULL;  // its last user deletes it
            }
            memmove(&cache[1], &cache[0], (size_t)cache_count * sizeof(entry *));
            cache[0] = made;
            cache_count++;
            e = made;
            made = NULL;
        }
        pthread_mutex_unlock(&cache_lock);
        if (made) delete_entry(made);
        if (evicted) delete_entry(evicted);
    }

    // In slices, so that counts past lcms' 32-bit pixel count are fine.
    const size_t slice = 1u << 20;
    for (size_t done = 0; done < count; done += slice) {
        size_t n = count - done < slice ? count - done : slice;
        unsigned char *start = pixels + done * (size_t)bands;
        cmsDoTransform(e->transform, start, start, (cmsUInt32Number)n);
    }
    release(e);
    return 0;
}
