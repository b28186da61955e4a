// Non-variadic wrappers over libvips, whose API is variadic (NULL-terminated
// option lists) and therefore not callable from Swift. Each wrapper names the
// options it passes; keep them small and obvious.
#ifndef IMAGERY_CVIPS_SHIM_H
#define IMAGERY_CVIPS_SHIM_H

#include <vips/vips.h>

static void imagery_vips_drop_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)domain; (void)level; (void)message; (void)data;
}

/// Stops libvips' warnings ("unknown EXIF resolution unit", "premature end of
/// JPEG file") from going to stderr: errors reach Swift as messages instead.
static inline void imagery_vips_silence_warnings(void) {
    g_log_set_handler("VIPS", (GLogLevelFlags)(G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO),
                      imagery_vips_drop_log, NULL);
}

/// Starts libvips once: operation cache off (it would hold decoded images and
/// make memory and benchmarks lie), untrusted loaders blocked, `threads`
/// worker threads per operation, and its run-time SIMD compiler (liborc) off unless
/// `vector` is set: orc before 0.4.34 is not thread-safe, and Debian 12's 0.4.33
/// crashed `imagery serve` in a soak (a segfault inside liborc while resizing, after
/// ten minutes of new sizes; sharp's users saw the same, lovell/sharp#3677).
/// Returns 0 on success.
static inline int imagery_vips_start(int threads, int vector) {
    if (vips_init("imagery") != 0) return -1;
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_cache_set_max_files(0);
    vips_concurrency_set(threads);
    vips_vector_set_enabled(vector ? TRUE : FALSE);
    vips_block_untrusted_set(TRUE);
    // Writing JPEG XL is safe (the bytes are ours); reading it from strangers stays blocked.
    vips_operation_block_set("VipsForeignSaveJxl", FALSE);
    // SVG from memory is read only after SVGSanitizer (VipsImageDecoder.started): no script, no reference
    // out of the document, no entity reaches librsvg. Files and sources stay blocked, and no other bytes
    // reach this loader: only what Imagery sniffs as SVG is given to libvips as SVG.
    vips_operation_block_set("VipsForeignLoadSvgBuffer", FALSE);
    imagery_vips_silence_warnings();
    return 0;
}

/// Opens an image lazily: reads the header only, decodes nothing until pixels
/// are asked for. Random access, so that rotation can read rows out of order.
/// `options`: the loader's, as libvips writes them after a file name ("fail_on=warning,n=-1").
static inline VipsImage *imagery_vips_open_buffer(const void *buffer, size_t length, const char *options) {
    return vips_image_new_from_buffer(buffer, length, options, "access", VIPS_ACCESS_RANDOM, NULL);
}



/// The name of the loader libvips would pick for these bytes, or NULL.
static inline const char *imagery_vips_loader_name(const void *buffer, size_t length) {
    return vips_foreign_find_load_buffer(buffer, length);
}

/// Decodes at a target size with shrink-on-load (JPEG DCT scaling, WebP
/// scaling, ...), auto-rotating by EXIF orientation.
/// `size` is a VipsSize, `crop` a VipsInteresting (VIPS_INTERESTING_NONE: no crop).
/// `options`: the loader's ("fail_on=warning": any decoder warning, truncated or corrupt data, bad
/// checksums, is an error instead of a partly grey or garbled image; "n=-1": every frame, each
/// resized to width x height; "page=2": that frame).
static inline int imagery_vips_thumbnail(const void *buffer, size_t length, VipsImage **out,
                                         int width, int height, VipsSize size, VipsInteresting crop, const char *options,
                                         int no_rotate) {
    return vips_thumbnail_buffer((void *)buffer, length, out, width,
                                 "height", height, "size", size, "crop", crop, "no_rotate", no_rotate ? TRUE : FALSE,
                                 "option_string", options, NULL);
}

/// A JPEG decoded at 1/shrink scale (libjpeg DCT scaling: 1, 2, 4 or 8), lazily.
static inline VipsImage *imagery_vips_open_jpeg_shrunk(const void *buffer, size_t length, int shrink, int strict) {
    VipsImage *out = NULL;
    if (vips_jpegload_buffer((void *)buffer, length, &out, "shrink", shrink,
                             "fail_on", strict ? VIPS_FAIL_ON_WARNING : VIPS_FAIL_ON_NONE,
                             "access", VIPS_ACCESS_RANDOM, NULL)) {
        return NULL;
    }
    return out;
}

/// Resizes an image in memory as `imagery_vips_thumbnail` does bytes (no shrink-on-load).
static inline int imagery_vips_thumbnail_image(VipsImage *in, VipsImage **out, int width, int height,
                                               VipsSize size, VipsInteresting crop) {
    return vips_thumbnail_image(in, out, width, "height", height, "size", size, "crop", crop, NULL);
}

static inline int imagery_vips_extract(VipsImage *in, VipsImage **out, int left, int top, int width, int height) {
    return vips_extract_area(in, out, left, top, width, height, NULL);
}

/// Wraps 8-bit pixels (16-bit when `sixteen`) without copying: they must outlive the image and everything made from it.
static inline VipsImage *imagery_vips_wrap_pixels(const void *pixels, size_t length, int width, int height, int bands, int sixteen) {
    return vips_image_new_from_memory(pixels, length, width, height, bands, sixteen ? VIPS_FORMAT_USHORT : VIPS_FORMAT_UCHAR);
}

/// The EXIF orientation libvips read from the header (1 to 8; 1 when there is none).
static inline int imagery_vips_orientation(VipsImage *image) {
    return vips_image_get_orientation(image);
}

/// Tags `image` with an EXIF orientation, for `imagery_vips_autorot`.
static inline void imagery_vips_set_orientation(VipsImage *image, int orientation) {
    vips_image_set_int(image, VIPS_META_ORIENTATION, orientation);
}

static inline int imagery_vips_autorot(VipsImage *in, VipsImage **out) {
    return vips_autorot(in, out, NULL);
}

static inline int imagery_vips_colourspace(VipsImage *in, VipsImage **out, VipsInterpretation space) {
    return vips_colourspace(in, out, space, NULL);
}

static inline int imagery_vips_cast_uchar(VipsImage *in, VipsImage **out) {
    return vips_cast_uchar(in, out, NULL);
}

static inline int imagery_vips_cast_ushort(VipsImage *in, VipsImage **out) {
    return vips_cast_ushort(in, out, NULL);
}

/// Whether `image` has more than 8 bits per sample (16-bit, 32-bit, floating point).
static inline int imagery_vips_is_deep(VipsImage *image) {
    VipsBandFormat format = vips_image_get_format(image);
    return format != VIPS_FORMAT_UCHAR && format != VIPS_FORMAT_CHAR;
}

/// `in` resized to exactly width x height in its own sample format (vips_thumbnail_image makes 8-bit sRGB):
/// Lanczos 3 as vips_resize does, alpha premultiplied around it.
static inline int imagery_vips_resize_exact(VipsImage *in, VipsImage **out, int width, int height) {
    VipsImage *t[4] = { NULL, NULL, NULL, NULL };
    int status = 0;
    VipsImage *current = in;
    gboolean alpha = vips_image_hasalpha(in);
    double hscale = (double) width / in->Xsize, vscale = (double) height / in->Ysize;
    if (alpha) { status = vips_premultiply(current, &t[0], NULL); current = t[0]; }
    if (!status) { status = vips_resize(current, &t[1], hscale, "vscale", vscale, NULL); current = t[1]; }
    if (!status && alpha) { status = vips_unpremultiply(current, &t[2], NULL); current = t[2]; }
    if (!status) status = vips_cast(current, &t[3], in->BandFmt, NULL);
    if (!status && (t[3]->Xsize != width || t[3]->Ysize != height))
        status = vips_embed(t[3], out, 0, 0, width, height, "extend", VIPS_EXTEND_COPY, NULL);
    else if (!status) { *out = t[3]; t[3] = NULL; }
    for (int i = 0; i < 4; i++) if (t[i]) g_object_unref(t[i]);
    return status;
}

/// Places `in` at the centre of a width x height canvas filled with zeros
/// (black, or transparent when the image has alpha).
static inline int imagery_vips_center_on_canvas(VipsImage *in, VipsImage **out, int width, int height) {
    return vips_gravity(in, out, VIPS_COMPASS_DIRECTION_CENTRE, width, height,
                        "extend", VIPS_EXTEND_BLACK, NULL);
}

static inline VipsImage *imagery_vips_from_pixels(const void *pixels, size_t length,
                                                  int width, int height, int bands, int sixteen) {
    return vips_image_new_from_memory_copy(pixels, length, width, height, bands, sixteen ? VIPS_FORMAT_USHORT : VIPS_FORMAT_UCHAR);
}

/// Tags `in` with a colour interpretation (no pixel changes).
static inline int imagery_vips_set_interpretation(VipsImage *in, VipsImage **out, VipsInterpretation space) {
    return vips_copy(in, out, "interpretation", space, NULL);
}

/// `progressive`: a progressive JPEG (libjpeg's default scan script).
/// `interlaced`: Adam7.
static inline int imagery_vips_pngsave(VipsImage *in, void **buffer, size_t *length, int compression, int interlaced, int strip) {
    return vips_pngsave_buffer(in, buffer, length, "compression", compression, "interlace", interlaced ? TRUE : FALSE,
                               "strip", strip, NULL);
}

static inline int imagery_vips_webpsave(VipsImage *in, void **buffer, size_t *length, int quality, int lossless, int strip) {
    return vips_webpsave_buffer(in, buffer, length, "Q", quality, "lossless", lossless ? TRUE : FALSE, "strip", strip, NULL);
}

/// 16-bit pixels as 12-bit AVIF, others as 8-bit. Not 10: this libaom aborts the process on every 10-bit
/// encode libheif asks of it (an assertion on the chroma subsampling, whatever the subsample mode or Q).
/// Effort 1 (libaom's speed 8, imgproxy's default): libvips' default, 4, took about 45 ms more than a
/// JPEG at 256 px, effort 1 about 10 (BENCHMARKS.md, issue 28).
static inline int imagery_vips_avifsave(VipsImage *in, void **buffer, size_t *length, int quality, int lossless, int strip) {
    return vips_heifsave_buffer(in, buffer, length, "Q", quality, "lossless", lossless ? TRUE : FALSE,
                                "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1, "effort", 1, "strip", strip,
                                "bitdepth", vips_image_get_format(in) == VIPS_FORMAT_USHORT ? 12 : 8, NULL);
}

/// HEIC: HEVC in HEIF, 8 bits (x265 through libheif).
static inline int imagery_vips_heicsave(VipsImage *in, void **buffer, size_t *length, int quality, int lossless, int strip) {
    return vips_heifsave_buffer(in, buffer, length, "Q", quality, "lossless", lossless ? TRUE : FALSE,
                                "compression", VIPS_FOREIGN_HEIF_COMPRESSION_HEVC, "strip", strip, "bitdepth", 8, NULL);
}

/// JPEG XL at effort 4 (libjxl's default is 7; BENCHMARKS.md, issue 10, has the measurement).
static inline int imagery_vips_jxlsave(VipsImage *in, void **buffer, size_t *length, int quality, int lossless, int strip) {
    return vips_jxlsave_buffer(in, buffer, length, "Q", quality, "lossless", lossless ? TRUE : FALSE, "effort", 4,
                               "strip", strip, NULL);
}

/// Still GIFs: libimagequant's palette (effort 7) with Floyd-Steinberg dithering. Animations are written
/// by CGIFFrames instead (one palette for all frames, no dithering).
static inline int imagery_vips_gifsave(VipsImage *in, void **buffer, size_t *length) {
    return vips_gifsave_buffer(in, buffer, length, NULL);
}

/// TIFF, deflate-compressed (lossless; small for thumbnails), metadata stripped when asked.
static inline int imagery_vips_tiffsave(VipsImage *in, void **buffer, size_t *length, int strip) {
    return vips_tiffsave_buffer(in, buffer, length, "compression", VIPS_FOREIGN_TIFF_COMPRESSION_DEFLATE, "strip", strip, NULL);
}

// MARK: Colour

/// Whether `image` carries an ICC profile.
static inline int imagery_vips_has_icc(VipsImage *image) {
    return vips_image_get_typeof(image, VIPS_META_ICC_NAME) != 0;
}

/// A new image sharing `in`'s pixels, whose metadata may be changed without touching `in`'s.
static inline int imagery_vips_copy(VipsImage *in, VipsImage **out) {
    return vips_copy(in, out, NULL);
}

/// Drops `image`'s ICC profile field (its pixels are sRGB now, whatever profile converted them).
static inline void imagery_vips_remove_icc(VipsImage *image) {
    vips_image_remove(image, VIPS_META_ICC_NAME);
}

/// Attaches an ICC profile (copied) to `image`.
static inline void imagery_vips_set_icc(VipsImage *image, const void *data, size_t length) {
    vips_image_set_blob_copy(image, VIPS_META_ICC_NAME, data, length);
}

/// The sRGB profile libvips converts to (its built-in "srgb"), loaded once and kept; 0 on success.
static inline int imagery_vips_srgb_profile(const void **data, size_t *length) {
    static VipsBlob *profile;  // the first caller's (callers serialise: `Vips.sRGBProfile` is a Swift `static let`)
    if (!profile && vips_profile_load("srgb", &profile, NULL)) {
        vips_error_clear();
        return -1;
    }
    *data = vips_blob_get(profile, length);
    return 0;
}

/// `in` converted from its embedded ICC profile to sRGB (relative colorimetric, `depth` 8 or 16 bits), the
/// profile removed. A profile lcms cannot use is ignored (the pixels are taken as sRGB): a broken
/// profile must not make an image undecodable.
static inline int imagery_vips_icc_to_srgb(VipsImage *in, VipsImage **out, int depth) {
    if (vips_icc_transform(in, out, "srgb", "embedded", TRUE, "intent", VIPS_INTENT_RELATIVE, "depth", depth, NULL)) {
        vips_error_clear();
        if (vips_copy(in, out, NULL)) return -1;
    }
    vips_image_remove(*out, VIPS_META_ICC_NAME);
    return 0;
}

/// libvips' name for the image's colour space ("srgb", "b-w", "cmyk", "rgb16", ...).
static inline const char *imagery_vips_interpretation_name(VipsImage *image) {
    return vips_enum_nick(VIPS_TYPE_INTERPRETATION, vips_image_get_interpretation(image));
}

/// Frames (pages) the file holds, from the header.
static inline int imagery_vips_n_pages(VipsImage *image) {
    return vips_image_get_n_pages(image);
}

/// The embedded ICC profile, borrowed from `image` (valid while it lives); returns 0 when there is one.
static inline int imagery_vips_get_icc(VipsImage *image, const void **data, size_t *length) {
    if (vips_image_get_typeof(image, VIPS_META_ICC_NAME) == 0) return -1;  // no error message for the usual case
    return vips_image_get_blob(image, VIPS_META_ICC_NAME, data, length);
}

/// A blob field of `image` ("exif-data", "xmp-data", "iptc-data"), borrowed; -1 when absent.
static inline int imagery_vips_get_blob(VipsImage *image, const char *name, const void **data, size_t *length) {
    if (vips_image_get_typeof(image, name) == 0) return -1;
    return vips_image_get_blob(image, name, data, length);
}

/// Sets a blob field of `image` to a copy of `data`.
static inline void imagery_vips_set_blob(VipsImage *image, const char *name, const void *data, size_t length) {
    vips_image_set_blob_copy(image, name, data, length);
}

/// A string field of `image` ("exif-ifd0-Copyright", ...), borrowed; NULL when absent.
static inline const char *imagery_vips_get_string(VipsImage *image, const char *name) {
    const char *value = NULL;
    if (vips_image_get_typeof(image, name) == 0 || vips_image_get_string(image, name, &value)) {
        vips_error_clear();
        return NULL;
    }
    return value;
}

/// Sets a string field (libvips writes `exif-ifd0-*` fields into the EXIF block it saves).
static inline void imagery_vips_set_string(VipsImage *image, const char *name, const char *value) {
    vips_image_set_string(image, name, value);
}

// MARK: Processing (ImageryVips/Processing/VipsImageProcessor.swift and its extensions)

static inline VipsArrayDouble *imagery_vips_array(const double *values, int count) {
    return vips_array_double_new(values, count);
}

static inline void imagery_vips_array_unref(VipsArrayDouble *array) {
    vips_area_unref(VIPS_AREA(array));
}

/// The bounding box of what is not background: pixels further than `threshold` from
/// `background` (`count` values, one per band). A wholly uniform image gives width 0.
static inline int imagery_vips_find_trim(VipsImage *in, int *left, int *top, int *width, int *height,
                                         double threshold, const double *background, int count) {
    VipsArrayDouble *array = vips_array_double_new(background, count);
    int status = vips_find_trim(in, left, top, width, height, "threshold", threshold, "background", array, NULL);
    vips_area_unref(VIPS_AREA(array));
    return status;
}

/// The pixel at (x, y), one value per band (at most `capacity`); returns the band count, or -1.
static inline int imagery_vips_getpoint(VipsImage *in, int x, int y, double *values, int capacity) {
    double *vector = NULL;
    int count = 0;
    if (vips_getpoint(in, &vector, &count, x, y, NULL)) return -1;
    for (int i = 0; i < count && i < capacity; i++) values[i] = vector[i];
    g_free(vector);
    return count;
}

/// `in` placed at (x, y) of a width x height canvas of `background` (one value per band).
static inline int imagery_vips_embed(VipsImage *in, VipsImage **out, int x, int y, int width, int height,
                                     const double *background, int count) {
    VipsArrayDouble *array = vips_array_double_new(background, count);
    int status = vips_embed(in, out, x, y, width, height, "extend", VIPS_EXTEND_BACKGROUND, "background", array, NULL);
    vips_area_unref(VIPS_AREA(array));
    return status;
}

/// `in` in blocks of `size` × `size` pixels, each its average (imgproxy's pixelate): the edges
/// mirrored out to whole blocks, shrunk by `size`, zoomed back, cut to the size it had.
static inline int imagery_vips_pixelate(VipsImage *in, VipsImage **out, int size) {
    int width = in->Xsize, height = in->Ysize;
    int paddedWidth = (width + size - 1) / size * size, paddedHeight = (height + size - 1) / size * size;
    VipsImage *t[3] = {NULL, NULL, NULL};
    int status = vips_embed(in, &t[0], 0, 0, paddedWidth, paddedHeight, "extend", VIPS_EXTEND_MIRROR, NULL)
        || vips_shrink(t[0], &t[1], size, size, NULL)
        || vips_zoom(t[1], &t[2], size, size, NULL)
        || vips_extract_area(t[2], out, 0, 0, width, height, NULL);
    for (int i = 0; i < 3; i++) if (t[i]) g_object_unref(t[i]);
    return status;
}

/// Alpha flattened onto `background` (one value per colour band).
static inline int imagery_vips_flatten_onto(VipsImage *in, VipsImage **out, const double *background, int count) {
    VipsArrayDouble *array = vips_array_double_new(background, count);
    int status = vips_flatten(in, out, "background", array, NULL);
    vips_area_unref(VIPS_AREA(array));
    return status;
}

/// An opaque alpha band added.
static inline int imagery_vips_add_alpha(VipsImage *in, VipsImage **out) {
    return vips_bandjoin_const1(in, out, 255, NULL);
}

/// Clockwise rotation: `angle` a VipsAngle (D90, D180, D270).
static inline int imagery_vips_rot(VipsImage *in, VipsImage **out, VipsAngle angle) {
    return vips_rot(in, out, angle, NULL);
}

/// Mirrors: VIPS_DIRECTION_HORIZONTAL swaps left and right, VERTICAL top and bottom.
static inline int imagery_vips_flip(VipsImage *in, VipsImage **out, VipsDirection direction) {
    return vips_flip(in, out, direction, NULL);
}

/// The most interesting width x height part (`interesting`: ATTENTION or ENTROPY). `in` is rendered
/// to memory first (the analysis reads it before the crop does: a sequential source cannot be read twice).
static inline int imagery_vips_smartcrop(VipsImage *in, VipsImage **out, int width, int height, VipsInteresting interesting) {
    VipsImage *memory = vips_image_copy_memory(in);
    if (!memory) return -1;
    int status = vips_smartcrop(memory, out, width, height, "interesting", interesting, NULL);
    g_object_unref(memory);
    return status;
}

static inline int imagery_vips_gaussblur(VipsImage *in, VipsImage **out, double sigma) {
    return vips_gaussblur(in, out, sigma, NULL);
}

/// Unsharp masking of lightness (libvips works in LabS and converts back).
static inline int imagery_vips_sharpen(VipsImage *in, VipsImage **out, double sigma) {
    return vips_sharpen(in, out, "sigma", sigma, NULL);
}

static inline int imagery_vips_premultiply(VipsImage *in, VipsImage **out) {
    return vips_premultiply(in, out, NULL);
}

static inline int imagery_vips_unpremultiply(VipsImage *in, VipsImage **out) {
    return vips_unpremultiply(in, out, NULL);
}

/// The first `count` bands.
static inline int imagery_vips_extract_bands(VipsImage *in, VipsImage **out, int first, int count) {
    return vips_extract_band(in, out, first, "n", count, NULL);
}

static inline int imagery_vips_bandjoin2(VipsImage *left, VipsImage *right, VipsImage **out) {
    return vips_bandjoin2(left, right, out, NULL);
}

/// `overlay` drawn over `base` at (x, y) ("over" blending; both need alpha or get it).
static inline int imagery_vips_composite_over(VipsImage *base, VipsImage *overlay, VipsImage **out, int x, int y) {
    return vips_composite2(base, overlay, out, VIPS_BLEND_MODE_OVER, "x", x, "y", y, NULL);
}

/// `in` repeated `across` × `down` times.
static inline int imagery_vips_replicate(VipsImage *in, VipsImage **out, int across, int down) {
    return vips_replicate(in, out, across, down, NULL);
}

/// The value below which `percent` % of `in`'s pixels fall (one band).
static inline int imagery_vips_percent(VipsImage *in, double percent, int *threshold) {
    return vips_percent(in, percent, threshold, NULL);
}

/// `in` × a + b, per pixel, as unsigned 8-bit (16-bit when `sixteen`).
static inline int imagery_vips_linear1(VipsImage *in, VipsImage **out, double a, double b, int sixteen) {
    if (!sixteen) return vips_linear1(in, out, a, b, "uchar", TRUE, NULL);
    VipsImage *t = NULL;
    if (vips_linear1(in, &t, a, b, NULL)) return -1;
    int status = vips_cast_ushort(t, out, NULL);
    g_object_unref(t);
    return status;
}

// MARK: Adjustments (ImageryVips/Processing/VipsImageProcessor+Adjustments.swift and the thumbor filters beside it)

/// Each band of `in` (uchar, `bands` bands) through its own 256-entry table (`tables`: band after band).
static inline int imagery_vips_map_tables(VipsImage *in, VipsImage **out, const unsigned char *tables, int bands) {
    unsigned char *interleaved = g_malloc(256 * bands);
    for (int i = 0; i < 256; i++)
        for (int b = 0; b < bands; b++) interleaved[i * bands + b] = tables[b * 256 + i];
    VipsImage *lut = vips_image_new_from_memory_copy(interleaved, 256 * bands, 256, 1, bands, VIPS_FORMAT_UCHAR);
    g_free(interleaved);
    if (!lut) return -1;
    int status = vips_maplut(in, out, lut, NULL);
    g_object_unref(lut);
    return status;
}

/// The histogram of band `band` of `in` (uchar): `counts[v]` pixels of value v.
static inline int imagery_vips_histogram(VipsImage *in, int band, double counts[256]) {
    VipsImage *hist = NULL, *wide = NULL;
    if (vips_hist_find(in, &hist, "band", band, NULL)) return -1;
    int status = vips_cast(hist, &wide, VIPS_FORMAT_DOUBLE, NULL);
    g_object_unref(hist);
    if (status) return -1;
    size_t size = 0;
    double *values = vips_image_write_to_memory(wide, &size);
    int width = wide->Xsize;
    g_object_unref(wide);
    if (!values) return -1;
    for (int v = 0; v < 256; v++) counts[v] = v < width && (size_t)(v + 1) * sizeof(double) <= size ? values[v] : 0;
    g_free(values);
    return 0;
}

/// thumbor's saturation of 3-band uchar `in`: each channel c to p + (c - p) × change, p the pixel's
/// sqrt(0.299 r² + 0.587 g² + 0.114 b²), truncated and kept in 0...255.
static inline int imagery_vips_saturation(VipsImage *in, VipsImage **out, double change) {
    VipsImage *t[6] = {NULL};
    double weights[3] = {0.299, 0.587, 0.114};
    VipsImage *matrix = vips_image_new_matrix_from_array(3, 1, weights, 3);
    if (!matrix) return -1;
    int status = vips_cast(in, &t[0], VIPS_FORMAT_FLOAT, NULL)
        || vips_multiply(t[0], t[0], &t[1], NULL)
        || vips_recomb(t[1], &t[2], matrix, NULL)
        || vips_math2_const1(t[2], &t[3], VIPS_OPERATION_MATH2_POW, 0.5, NULL)
        || vips_linear1(t[3], &t[4], 1 - change, 0, NULL)
        || vips_linear1(t[0], &t[5], change, 0, NULL);
    VipsImage *sum = NULL;
    if (!status) status = vips_add(t[5], t[4], &sum, NULL) || vips_cast(sum, out, VIPS_FORMAT_UCHAR, NULL);
    if (sum) g_object_unref(sum);
    for (int i = 0; i < 6; i++) if (t[i]) g_object_unref(t[i]);
    g_object_unref(matrix);
    return status;
}

/// `plane` (one band of signed 16-bit values, `in`'s size) added to every band of uchar `in`,
/// kept in 0...255.
static inline int imagery_vips_add_plane(VipsImage *in, VipsImage **out, const short *plane, int width, int height) {
    VipsImage *noise = vips_image_new_from_memory_copy(plane, (size_t)width * height * sizeof(short), width, height, 1, VIPS_FORMAT_SHORT);
    if (!noise) return -1;
    VipsImage *sum = NULL;
    int status = vips_add(in, noise, &sum, NULL) || vips_cast(sum, out, VIPS_FORMAT_UCHAR, NULL);
    if (sum) g_object_unref(sum);
    g_object_unref(noise);
    return status;
}

/// `in` convolved with a `columns` × `rows` matrix of `weights` (row after row), in float, the edges
/// repeated outwards, truncated and kept in 0...255 (thumbor's convolution).
static inline int imagery_vips_convolve(VipsImage *in, VipsImage **out, const double *weights, int columns, int rows) {
    VipsImage *matrix = vips_image_new_matrix_from_array(columns, rows, weights, columns * rows);
    if (!matrix) return -1;
    VipsImage *t[2] = {NULL};
    int status = vips_embed(in, &t[0], columns / 2, rows / 2, in->Xsize + columns - 1, in->Ysize + rows - 1,
                            "extend", VIPS_EXTEND_COPY, NULL)
        || vips_conv(t[0], &t[1], matrix, "precision", VIPS_PRECISION_FLOAT, NULL);
    VipsImage *inner = NULL;
    if (!status) status = vips_extract_area(t[1], &inner, columns / 2, rows / 2, in->Xsize, in->Ysize, NULL)
        || vips_cast(inner, out, VIPS_FORMAT_UCHAR, NULL);
    if (inner) g_object_unref(inner);
    for (int i = 0; i < 2; i++) if (t[i]) g_object_unref(t[i]);
    g_object_unref(matrix);
    return status;
}

/// thumbor's sharpen (Marco Rossini's wavelet sharpen), on float `in` (every band): five levels of an
/// "à trous" decomposition, each a [1 2 1]/4 blur a row then a column apart by 2^level pixels (edges
/// mirrored), each level's detail scaled by amount × e^(-(level - radius)² / 1.5) + 1, summed with
/// what is left after the last level.
static inline int imagery_vips_wavelet_sharpen(VipsImage *in, VipsImage **out, double amount, double radius) {
    VipsImage *low = in, *sum = NULL;
    g_object_ref(low);
    int status = 0;
    for (int level = 0; level < 5 && !status; level++) {
        int spacing = 1 << level, size = 2 * spacing + 1;
        double weights[33] = {0};
        weights[0] = 1; weights[spacing] = 2; weights[2 * spacing] = 1;
        VipsImage *mask = vips_image_new_matrix_from_array(size, 1, weights, size);
        if (!mask) { status = -1; break; }
        vips_image_set_double(mask, "scale", 4);
        VipsImage *t[5] = {NULL};
        int width = low->Xsize, height = low->Ysize;
        int mirror = spacing < width && spacing < height ? spacing : 0;
        status = vips_embed(low, &t[0], mirror, mirror, width + 2 * mirror, height + 2 * mirror, "extend", VIPS_EXTEND_MIRROR, NULL)
            || vips_convsep(t[0], &t[1], mask, "precision", VIPS_PRECISION_FLOAT, NULL)
            || vips_extract_area(t[1], &t[2], mirror, mirror, width, height, NULL)
            || vips_subtract(low, t[2], &t[3], NULL)
            || vips_linear1(t[3], &t[4], amount * exp(-(level - radius) * (level - radius) / 1.5) + 1, 0, NULL);
        g_object_unref(mask);
        if (!status) {
            VipsImage *next = NULL;
            if (sum) { status = vips_add(sum, t[4], &next, NULL); g_object_unref(sum); sum = next; }
            else { sum = t[4]; g_object_ref(sum); }
            g_object_unref(low);
            low = t[2];
            g_object_ref(low);
        }
        for (int i = 0; i < 5; i++) if (t[i]) g_object_unref(t[i]);
    }
    if (!status) status = vips_add(sum, low, out, NULL);
    if (sum) g_object_unref(sum);
    g_object_unref(low);
    return status;
}

/// 3-band float `in` through a 3 × 3 `matrix` (row after row), plus `offsets` per band.
static inline int imagery_vips_recombine(VipsImage *in, VipsImage **out, const double *matrix, const double *offsets) {
    VipsImage *m = vips_image_new_matrix_from_array(3, 3, matrix, 9);
    if (!m) return -1;
    VipsImage *t = NULL;
    int status = vips_recomb(in, &t, m, NULL) || vips_linear(t, out, (double[]){1, 1, 1}, offsets, 3, NULL);
    if (t) g_object_unref(t);
    g_object_unref(m);
    return status;
}

/// The luma of 3-band uchar `in` as one band, as Pillow's convert("L") makes it:
/// (19595 R + 38470 G + 7471 B + 32768) >> 16.
static inline int imagery_vips_luma(VipsImage *in, VipsImage **out) {
    double weights[3] = {19595, 38470, 7471};
    VipsImage *m = vips_image_new_matrix_from_array(3, 1, weights, 3);
    if (!m) return -1;
    VipsImage *t[4] = {NULL};
    int status = vips_cast(in, &t[0], VIPS_FORMAT_UINT, NULL)
        || vips_recomb(t[0], &t[1], m, NULL)
        || vips_cast(t[1], &t[2], VIPS_FORMAT_UINT, NULL)
        || vips_linear1(t[2], &t[3], 1, 32768, NULL);
    VipsImage *shifted = NULL, *whole = NULL;
    if (!status) status = vips_cast(t[3], &whole, VIPS_FORMAT_UINT, NULL)
        || vips_rshift_const1(whole, &shifted, 16, NULL)
        || vips_cast(shifted, out, VIPS_FORMAT_UCHAR, NULL);
    if (shifted) g_object_unref(shifted);
    if (whole) g_object_unref(whole);
    for (int i = 0; i < 4; i++) if (t[i]) g_object_unref(t[i]);
    g_object_unref(m);
    if (!status) (*out)->Type = VIPS_INTERPRETATION_B_W;
    return status;
}

/// Float `in` truncated to uchar, kept in 0...255.
static inline int imagery_vips_cast_truncating(VipsImage *in, VipsImage **out) {
    return vips_cast(in, out, VIPS_FORMAT_UCHAR, NULL);
}

/// `in` as float.
static inline int imagery_vips_cast_float(VipsImage *in, VipsImage **out) {
    return vips_cast(in, out, VIPS_FORMAT_FLOAT, NULL);
}

/// `in` rendered into a new memory image of its own (never `in` itself, even when `in` is in memory
/// already): one whose pixels may be changed in place.
static inline int imagery_vips_render_copy(VipsImage *in, VipsImage **out) {
    VipsImage *memory = vips_image_new_memory();
    if (vips_image_write(in, memory)) { g_object_unref(memory); return -1; }
    *out = memory;
    return 0;
}

/// RGBA `over` (`width` × `height`, 8 bits) laid on the 8-bit 3- or 4-band memory image `image` at
/// (x, y), in place, cut to the image: with thumbor's `_composite` arithmetic ("over": colours
/// weighted by alpha, truncated), or, with `destOut`, as thumbor's transparent round corners: where
/// `over` is opaque, its colour at alpha 0; where it is partly, the colours darkened by it.
static inline void imagery_blend_in_place(VipsImage *image, const unsigned char *over, int width, int height, int x, int y, int destOut) {
    int bands = image->Bands;
    if (image->BandFmt != VIPS_FORMAT_UCHAR || (bands != 3 && bands != 4)) return;
    for (int row = 0; row < height; row++) {
        int ty = y + row;
        if (ty < 0 || ty >= image->Ysize) continue;
        unsigned char *line = VIPS_IMAGE_ADDR(image, 0, ty);
        for (int column = 0; column < width; column++) {
            int tx = x + column;
            if (tx < 0 || tx >= image->Xsize) continue;
            const unsigned char *o = over + ((size_t)row * width + column) * 4;
            unsigned char *p = line + (size_t)tx * bands;
            if (destOut) {  // thumbor's transparent corners: outside, its colour at alpha 0; the edge darkened, alpha kept
                if (bands != 4 || o[3] == 0) continue;
                if (o[3] == 255) {
                    p[0] = o[0]; p[1] = o[1]; p[2] = o[2]; p[3] = 0;
                } else {
                    for (int c = 0; c < 3; c++) p[c] = (unsigned char)(p[c] * (255 - o[3]) / 255);
                }
                continue;
            }
            double a1 = 255 - (bands == 4 ? p[3] : 255), a2 = 255 - o[3];
            double delta = (a2 / 255.0) * (a1 / 255.0);
            double alpha = 255.0 * delta;
            delta = 1.0 - delta;
            delta = delta <= 1.0e-12 ? 1.0 : 1.0 / delta;
            for (int c = 0; c < 3; c++) {
                double value = delta * ((1.0 - a2 / 255.0) * o[c] + (1.0 - a1 / 255.0) * p[c] * (a2 / 255.0));
                p[c] = (unsigned char)(value > 255.0 ? 255 : value < 0.0 ? 0 : (int)value);
            }
            if (bands == 4) {
                double a = 255.0 - alpha;
                p[3] = (unsigned char)(a > 255.0 ? 255 : a < 0.0 ? 0 : (int)a);
            }
        }
    }
}

/// 8-bit pixels (copied) as an sRGB image of `bands` bands (3, or 4 with alpha): no operation runs.
static inline VipsImage *imagery_vips_srgb_from_pixels(const void *pixels, size_t length, int width, int height, int bands) {
    VipsImage *image = vips_image_new_from_memory_copy(pixels, length, width, height, bands, VIPS_FORMAT_UCHAR);
    if (image) image->Type = VIPS_INTERPRETATION_sRGB;
    return image;
}

/// `count` overlays drawn on `base` in one pass, each at its (x, y), in blend `mode` (OVER: laid
/// over; DEST_OUT: `base`'s alpha removed where they are opaque).
static inline int imagery_vips_composite_at(VipsImage *base, VipsImage **overlays, int count, const int *x, const int *y,
                                            VipsBlendMode mode, VipsImage **out) {
    if (count < 1) return -1;
    VipsImage **images = g_new(VipsImage *, count + 1);
    int *modes = g_new(int, count);
    images[0] = base;
    for (int i = 0; i < count; i++) { images[i + 1] = overlays[i]; modes[i] = mode; }
    VipsArrayInt *xs = vips_array_int_new(x, count), *ys = vips_array_int_new(y, count);
    int status = vips_composite(images, out, count + 1, modes, "x", xs, "y", ys, NULL);
    vips_area_unref(VIPS_AREA(xs));
    vips_area_unref(VIPS_AREA(ys));
    g_free(images);
    g_free(modes);
    return status;
}

/// An image of ours (a watermark the operator configured), opened from encoded bytes; NULL on failure.
static inline VipsImage *imagery_vips_load_trusted(const void *buffer, size_t length) {
    return vips_image_new_from_buffer(buffer, length, "", "access", VIPS_ACCESS_RANDOM, NULL);
}

/// A line of text drawn by Pango in colour (r, g, b) on transparency: an sRGB image whose alpha is the
/// letters' coverage times `alpha` / 255. The text is escaped: it is drawn as written, never read as
/// Pango markup. NULL on failure.
static inline VipsImage *imagery_vips_text_mark(const char *text, const char *font, double r, double g, double b, double alpha) {
    gchar *escaped = g_markup_escape_text(text, -1);
    VipsImage *mask = NULL;
    int failed = vips_text(&mask, escaped, "font", font, "dpi", 72, NULL);
    g_free(escaped);
    if (failed) return NULL;
    double colour[3] = {r, g, b};
    VipsImage *letters = vips_image_new_from_image(mask, colour, 3);
    VipsImage *coverage = NULL, *joined = NULL, *tagged = NULL;
    if (letters && !vips_linear1(mask, &coverage, alpha / 255.0, 0, "uchar", TRUE, NULL) &&
        !vips_bandjoin2(letters, coverage, &joined, NULL)) {
        vips_copy(joined, &tagged, "interpretation", VIPS_INTERPRETATION_sRGB, NULL);
    }
    if (joined) g_object_unref(joined);
    if (coverage) g_object_unref(coverage);
    if (letters) g_object_unref(letters);
    g_object_unref(mask);
    return tagged;
}

// MARK: Animation (frames stacked top to bottom, each `page-height` rows)

/// The height of one frame (page): the image's height when it is not animated.
static inline int imagery_vips_page_height(VipsImage *image) {
    return vips_image_get_page_height(image);
}

static inline void imagery_vips_set_page_height(VipsImage *image, int height) {
    vips_image_set_int(image, VIPS_META_PAGE_HEIGHT, height);
}

/// Each frame's delay in milliseconds (`*count` of them; NULL when there is none). Owned by `image`.
static inline const int *imagery_vips_delays(VipsImage *image, int *count) {
    int *values = NULL;
    *count = 0;
    if (vips_image_get_typeof(image, "delay") == 0 || vips_image_get_array_int(image, "delay", &values, count)) return NULL;
    return values;
}

/// How many times the animation plays (0: forever); 0 when unset.
static inline int imagery_vips_loop(VipsImage *image) {
    int loop = 0;
    if (vips_image_get_typeof(image, "loop") != 0) vips_image_get_int(image, "loop", &loop);
    return loop;
}

/// Sets the animation's timing on `image` (which must not be shared yet).
static inline void imagery_vips_set_animation(VipsImage *image, int page_height, const int *delays, int count, int loop) {
    vips_image_set_int(image, VIPS_META_PAGE_HEIGHT, page_height);
    vips_image_set_array_int(image, "delay", delays, count);
    vips_image_set_int(image, "loop", loop);
}

/// `count` images of one width stacked top to bottom.
static inline int imagery_vips_stack(VipsImage **in, int count, VipsImage **out) {
    return vips_arrayjoin(in, out, count, "across", 1, NULL);
}

/// Renders `in` into memory (random access for what reads it more than once, or out of order).
static inline int imagery_vips_copy_memory(VipsImage *in, VipsImage **out) {
    *out = vips_image_copy_memory(in);
    return *out ? 0 : -1;
}

/// Where an extracted (or smart-cropped) area was in its input: (-xoffset, -yoffset).
static inline void imagery_vips_origin(VipsImage *image, int *x, int *y) {
    *x = -vips_image_get_xoffset(image);
    *y = -vips_image_get_yoffset(image);
}

/// Opens an image lazily for one pass, top to bottom (no copy of a format that cannot be read out of order).
static inline VipsImage *imagery_vips_open_sequential(const void *buffer, size_t length, const char *options) {
    return vips_image_new_from_buffer(buffer, length, options, "access", VIPS_ACCESS_SEQUENTIAL, NULL);
}

/// Resamples by (hscale, vscale) with Lanczos 3, as `vips_thumbnail` does, in the image's own format
/// (no premultiplication: for pixels that are premultiplied already).
static inline int imagery_vips_resize(VipsImage *in, VipsImage **out, double hscale, double vscale) {
    return vips_resize(in, out, hscale, "vscale", vscale, "kernel", VIPS_KERNEL_LANCZOS3, NULL);
}

static void imagery_vips_free_on_close(VipsImage *image, void *pixels) {
    (void)image;
    g_free(pixels);
}

/// A new uchar image of `frames` frames of width x height x bands, its memory owned by the image
/// (freed when it closes); `*pixels` receives the memory to render the frames into.
static inline VipsImage *imagery_vips_new_frames(int width, int height, int bands, int frames, void **pixels) {
    size_t length = (size_t)width * height * bands * frames;
    *pixels = g_try_malloc(length);
    if (!*pixels) {
        vips_error("imagery", "out of memory for %d frames", frames);
        return NULL;
    }
    VipsImage *image = vips_image_new_from_memory(*pixels, length, width, height * frames, bands, VIPS_FORMAT_UCHAR);
    if (!image) {
        g_free(*pixels);
        return NULL;
    }
    g_signal_connect(image, "postclose", G_CALLBACK(imagery_vips_free_on_close), *pixels);
    return image;
}

/// Computes all of `in` on the calling thread, without a thread pool, into a region the caller reads
/// in place (`*pixels`, rows `*stride` bytes apart) and then unrefs; NULL on failure.
static inline VipsRegion *imagery_vips_compute_region(VipsImage *in, const void **pixels, size_t *stride) {
    VipsRegion *region = vips_region_new(in);
    VipsRect all = {0, 0, in->Xsize, in->Ysize};
    if (vips_region_prepare(region, &all)) {
        g_object_unref(region);
        return NULL;
    }
    *pixels = VIPS_REGION_ADDR(region, 0, 0);
    *stride = VIPS_REGION_LSKIP(region);
    return region;
}

static inline void imagery_vips_region_unref(VipsRegion *region) {
    g_object_unref(region);
}

/// Computes all of `in` (uchar) on the calling thread, without a thread pool, into `pixels` (its
/// width x height x bands bytes): for one frame of many, where a pool per frame costs more than the frame.
static inline int imagery_vips_render_into(VipsImage *in, void *pixels) {
    VipsRegion *region = vips_region_new(in);
    VipsRect all = {0, 0, in->Xsize, in->Ysize};
    if (vips_region_prepare(region, &all)) {
        g_object_unref(region);
        return -1;
    }
    size_t line = VIPS_IMAGE_SIZEOF_LINE(in);
    for (int y = 0; y < in->Ysize; y++) memcpy((char *)pixels + y * line, VIPS_REGION_ADDR(region, 0, y), line);
    g_object_unref(region);
    return 0;
}

/// All of `in` computed on the calling thread into a new buffer of its whole size (free it with
/// `imagery_vips_free`), `*length` set to that size; NULL on failure (libvips' error set). Where
/// `vips_image_write_to_memory` hands the work to a libvips worker thread and waits for it (a
/// handoff to another core and back for each image, however small), this computes it in place.
static inline void *imagery_vips_render_here(VipsImage *in, size_t *length) {
    size_t size = VIPS_IMAGE_SIZEOF_IMAGE(in);
    void *pixels = g_try_malloc(size);
    if (!pixels) {
        vips_error("imagery", "out of memory for a %dx%d image", in->Xsize, in->Ysize);
        return NULL;
    }
    if (imagery_vips_render_into(in, pixels)) {
        g_free(pixels);
        return NULL;
    }
    *length = size;
    return pixels;
}

/// Takes and clears libvips' error message (NULL-free, possibly empty).
static inline const char *imagery_vips_error_message(void) {
    return vips_error_buffer();
}

static inline void imagery_vips_unref(VipsImage *image) {
    g_object_unref(image);
}

static inline void imagery_vips_free(void *buffer) {
    g_free(buffer);
}

#endif
