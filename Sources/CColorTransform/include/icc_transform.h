// Colour transforms of 8-bit RGB pixels between two ICC profiles (little cms), cached by profile.
//
// libvips builds a new little cms transform for every image it converts (about 5 ms here, most of it
// inverting the destination profile's tone curves), which costs more than converting a thumbnail's
// pixels (about 12 ns a pixel). Sources with a profile mostly carry one of a few (sRGB variants,
// Display P3, Adobe RGB), so transforms are kept, a few at a time, and used again. Link with -llcms2.
#ifndef IMAGERY_ICC_TRANSFORM_H
#define IMAGERY_ICC_TRANSFORM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Converts `count` pixels of `bands` 8-bit samples (3: RGB; 4: RGB and alpha, the alpha left as it
/// is) in place from the colour space of `profile` to that of `destination`, with the relative
/// colorimetric intent and no black point compensation (libvips' defaults for `icc_transform`).
/// Returns 0 on success; -1, with the pixels untouched, when either profile cannot be read or is
/// not an RGB profile, or `bands` is neither 3 nor 4. `built` (may be NULL) is set to 1 when this call
/// had to build the transform, 0 when it found it kept. Safe to call from several threads at once.
int imagery_icc_transform_rgb8(const void *profile, size_t profile_length, const void *destination, size_t destination_length,
                               unsigned char *pixels, size_t count, int bands, int *built);

#ifdef __cplusplus
}
#endif

#endif
