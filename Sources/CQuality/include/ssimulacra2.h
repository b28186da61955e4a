// SSIMULACRA2 (Cloudinary's perceptual metric, as libjxl's tools compute it): how close a distorted
// image looks to its reference. Written for Imagery from the metric's published description and
// constants; scores follow the reference implementations to within about a point.
#ifndef IMAGERY_SSIMULACRA2_H
#define IMAGERY_SSIMULACRA2_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The SSIMULACRA2 score of `distorted` against `reference`: both 8-bit sRGB, `components` 1 (grey)
/// or 3 (RGB), `width` x `height`, rows `stride` bytes apart. 100: identical; about 90: visually
/// lossless; 70: high quality; 50: medium; lower is worse (it may go below 0). Returns a NaN when an
/// argument is bad or memory runs out. Images under 8 x 8 are measured at one scale only.
double imagery_ssimulacra2(const unsigned char *reference, const unsigned char *distorted, int width, int height,
                           int components, size_t stride);

/// A reference prepared once for comparing many distorted images with it (a quality search): what
/// depends on the reference alone is computed here. Thread-safe to compare with from several threads.
typedef struct imagery_ssimulacra2_reference imagery_ssimulacra2_reference;

/// Prepares `reference` (arguments as for imagery_ssimulacra2). `fast` != 0: only the maps whose
/// weights are 0.01 or more are measured (X and B at full size, every channel at the smallest scale
/// are not), about half the work of a comparison, the score within a few tenths of the whole
/// metric's. NULL when an argument is bad or memory runs out. It holds about 5 floats a pixel in the
/// fast mode, 12 otherwise.
imagery_ssimulacra2_reference *imagery_ssimulacra2_prepare(const unsigned char *reference, int width, int height,
                                                          int components, size_t stride, int fast);

/// The score of `distorted` (the reference's size and components, rows `stride` bytes apart)
/// against a prepared reference. It holds about 11 floats a pixel while it runs. NaN when memory runs out.
double imagery_ssimulacra2_compare(const imagery_ssimulacra2_reference *reference, const unsigned char *distorted,
                                   size_t stride);

/// Frees a prepared reference (NULL is fine).
void imagery_ssimulacra2_release(imagery_ssimulacra2_reference *reference);

#ifdef __cplusplus
}
#endif

#endif
