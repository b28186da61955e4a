// JPEG decoding at 1/2, 1/4 or 1/8 scale (libjpeg DCT scaling) that does not entropy-decode
// the progressive scans whose coefficients the scaled inverse DCT never reads.
//
// The pixels are exactly those libjpeg(-turbo) gives when it decodes every scan at that scale
// with its defaults (JDCT_ISLOW, fancy upsampling, RGB or grey output). Link with -ljpeg.
#ifndef IMAGERY_JPEG_SCALED_H
#define IMAGERY_JPEG_SCALED_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    IMAGERY_JPEG_OK = 0,
    /// Broken, truncated or hostile data (in strict mode also any libjpeg warning); see `error`.
    IMAGERY_JPEG_CORRUPT = 1,
    /// A JPEG this decoder does not handle (CMYK/YCCK, 12-bit, lossless, unusual component
    /// counts) or a bad argument: decode it another way (libvips).
    IMAGERY_JPEG_UNSUPPORTED = 2,
    /// The header declares more than `max_pixels` pixels; nothing was decoded.
    IMAGERY_JPEG_TOO_LARGE = 3,
    /// Memory could not be allocated (the data may be fine: try again later, or with less in flight).
    IMAGERY_JPEG_NO_MEMORY = 4,
};

typedef struct {
    int width, height;      ///< output size after DCT scaling (libjpeg rounds up)
    int components;         ///< 1 (grey) or 3 (RGB)
    unsigned char *pixels;  ///< width*height*components bytes, rows top to bottom; free with imagery_jpeg_free
    int scans_in_file;      ///< scans (SOS markers) in the stream; 1 for a baseline JPEG
    int scans_decoded;      ///< scans given to libjpeg
    unsigned char *icc_profile;  ///< the embedded ICC profile (APP2 chunks joined), or NULL; freed by imagery_jpeg_free
    unsigned int icc_length;
} imagery_jpeg_image;

/// Decodes a JPEG at 1/`scale` (1, 2, 4 or 8) to 8-bit RGB or grey. For a progressive JPEG,
/// the scans that carry only coefficients the scaled inverse DCT of their component does not
/// read are skipped without being entropy-decoded (at scale 8: luma AC, and chroma AC unless the
/// chroma is 4:2:0). EXIF orientation and ICC profiles are not applied; the profile is returned.
///
/// `strict` != 0: any libjpeg warning (corrupt data, premature end of data, ...) is an error, and
/// so is a stream without an EOI marker after its last scan, even when the part that is missing
/// is one that would have been skipped. Corrupt entropy-coded data inside a skipped scan is not
/// seen (it is never decoded).
///
/// `max_pixels`: refuse (IMAGERY_JPEG_TOO_LARGE) a header declaring more than this many pixels
/// (width * height at full size) before anything large is allocated; 0 means no limit.
///
/// Returns IMAGERY_JPEG_OK and fills `out`, or another IMAGERY_JPEG_ code with a message in
/// `error` (NUL-terminated, truncated to `error_capacity`; `error` may be NULL) and `out` zeroed.
int imagery_jpeg_decode_scaled(const void *data, size_t length, int scale, int strict, size_t max_pixels,
                               imagery_jpeg_image *out, char *error, size_t error_capacity);

/// Decodes the first part of a progressive JPEG, cut where a scan's entropy-coded data ends (before
/// the marker that follows it: what has arrived of a download), as a preview: the scans so far at
/// 1/`scale`, in non-strict mode (libjpeg meets the end of the data as a premature end of file). The
/// end of the data stands for an EOI marker, so the scans the scale never reads are skipped as in
/// imagery_jpeg_decode_scaled, whatever block smoothing would have made of the scans still to come;
/// smoothing is then off (a preview is not the image: its pixels need not be those of a decode that
/// reads every scan). Data cut elsewhere, or not a progressive JPEG this decoder plans, is decoded as
/// imagery_jpeg_decode_scaled decodes it in non-strict mode. Arguments and results as there.
int imagery_jpeg_decode_prefix(const void *data, size_t length, int scale, size_t max_pixels,
                               imagery_jpeg_image *out, char *error, size_t error_capacity);

/// Frees the pixels of an image filled by imagery_jpeg_decode_scaled and zeroes it (NULL is fine).
void imagery_jpeg_free(imagery_jpeg_image *image);

#ifdef __cplusplus
}
#endif

#endif
