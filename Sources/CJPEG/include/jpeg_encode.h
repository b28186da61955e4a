// JPEG encoding on libjpeg(-turbo) with what its defaults leave out: Huffman tables optimised for
// each image, progressive scans on request, a choice of quantisation tables (the standard ones or
// perceptually tuned ones) and trellis quantisation. Pixels in, bytes out, markers (EXIF, XMP, IPTC,
// ICC) written as given.
// Link with -ljpeg.
#ifndef IMAGERY_JPEG_ENCODE_H
#define IMAGERY_JPEG_ENCODE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The quantisation tables an encode scales by its quality.
enum {
    /// The example tables of the JPEG standard (ITU T.81 Annex K), which libjpeg and most encoders use.
    IMAGERY_JPEG_TABLES_STANDARD = 0,
    /// Smoother tables tuned by eye (N. Robidoux's, the one mozjpeg calls table 3 and sharp picks with
    /// `mozjpeg`): coarser at high frequencies, finer at low ones; one table for luma and chroma.
    IMAGERY_JPEG_TABLES_TUNED = 1,
};

typedef struct {
    int quality;         ///< 1...100, scaled as libjpeg's jpeg_set_quality does
    int tables;          ///< IMAGERY_JPEG_TABLES_
    int progressive;     ///< != 0: libjpeg's standard progressive scan script
    int full_chroma;     ///< != 0: 4:4:4 (no chroma subsampling); 0: 4:2:0
    /// != 0: trellis quantisation (each coefficient chosen for its error and its bits, as mozjpeg
    /// does); 0: rounding, as libjpeg does.
    int trellis;
    /// Markers to write, each the payload as it goes into its segment, or NULL:
    /// `exif` starts with "Exif\0\0"; `xmp` is the packet alone (the namespace header is added);
    /// `iptc` starts with "Photoshop 3.0\0"; `icc` is the profile (split into APP2 chunks).
    /// One that does not fit in its segment (64 KiB; ICC: 255 chunks) is left out.
    const unsigned char *exif, *xmp, *iptc, *icc;
    size_t exif_length, xmp_length, iptc_length, icc_length;
} imagery_jpeg_encode_settings;

/// Encodes 8-bit pixels: `components` 1 (grey, written as one component) or 3 (RGB, written as
/// YCbCr), rows `stride` bytes apart. On success returns 0 and sets `*out` (free it with
/// imagery_jpeg_free_encoded) and `*out_length`; otherwise returns an IMAGERY_JPEG_ code of
/// jpeg_scaled.h (UNSUPPORTED for a bad argument, NO_MEMORY) with a message in `error`.
int imagery_jpeg_encode(const unsigned char *pixels, int width, int height, int components, size_t stride,
                        const imagery_jpeg_encode_settings *settings, unsigned char **out, size_t *out_length,
                        char *error, size_t error_capacity);

void imagery_jpeg_free_encoded(unsigned char *data);

#ifdef __cplusplus
}
#endif

#endif
