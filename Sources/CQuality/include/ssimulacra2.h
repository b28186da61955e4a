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

#ifdef __cplusplus
}
#endif

#endif
