// JPEG encoding on libjpeg(-turbo): see include/jpeg_encode.h for the contract.
//
// Why these settings
// ------------------
// - Optimised Huffman tables (optimize_coding): libjpeg's default is the example tables of the
//   standard, fitted to no image. A second pass over the coefficients it already has fits them to
//   this one: the same pixels in 4-6% fewer bytes, at a small cost in time.
// - Tuned quantisation tables: the standard's tables come from a 1980s viewing experiment at one
//   distance and are known to spend too many bits on high frequencies. The tuned table (from
//   N. Robidoux's post on the ImageMagick forum, 2012; mozjpeg ships it as its table 3 and uses it by
//   default) grows smoothly with frequency; with the same quality scaling it gives fewer bytes for
//   the same perceived quality (measured in BENCHMARKS.md). Its values are facts copied from the
//   post; the code around them is ours.
// - Trellis quantisation (jpeg_trellis.c): libjpeg computes and rounds the coefficients itself and
//   offers no way to choose them, so this file does what libjpeg's front end does (colour
//   conversion as jccolor.c, 2x2 box downsampling with jcsample.c's alternating bias, edge
//   replication), computes the DCT, quantises each block row (by trellis, or by rounding as libjpeg
//   does), and hands libjpeg the coefficients (jpeg_write_coefficients, as jpegtran does), which it
//   entropy-codes as usual. One strip of iMCU rows of samples at a time; libjpeg's coefficient
//   arrays (2 bytes a coefficient) are the whole image, as optimised Huffman tables need anyway.
// - Progressive scans: libjpeg's standard script. Spectral selection and successive approximation
//   let each band get its own Huffman tables: smaller for all but small images (the caller
//   decides, by size).

#include "include/jpeg_encode.h"
#include "include/jpeg_scaled.h"
#include "jpeg_trellis.h"

#include <limits.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>  // jpeglib.h needs FILE
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>

// N. Robidoux's table, row by row in natural (not zigzag) order, for quality 50 (scale 100%).
static const unsigned int tuned_table[DCTSIZE2] = {
    16, 16,  16,  18,  25,  37,  56,  85,
    16, 17,  20,  27,  34,  40,  53,  75,
    16, 20,  24,  31,  43,  62,  91,  135,
    18, 27,  31,  40,  53,  74,  106, 156,
    25, 34,  43,  53,  69,  94,  131, 189,
    37, 40,  62,  74,  94,  124, 169, 238,
    56, 53,  91,  106, 131, 169, 226, 311,
    85, 75,  135, 156, 189, 238, 311, 418,
};

// MARK: - Errors

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    int status;
    char message[JMSG_LENGTH_MAX];
} encode_error_manager;

static void encode_fail(j_common_ptr cinfo) {
    encode_error_manager *error = (encode_error_manager *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, error->message);
    error->status = cinfo->err->msg_code == JERR_OUT_OF_MEMORY ? IMAGERY_JPEG_NO_MEMORY : IMAGERY_JPEG_UNSUPPORTED;
    longjmp(error->jump, 1);
}

static void encode_ignore_message(j_common_ptr cinfo, int level) { (void)cinfo; (void)level; }
static void encode_print_nothing(j_common_ptr cinfo) { (void)cinfo; }

// MARK: - Destination: a buffer that grows, owned here until it is handed over

typedef struct {
    struct jpeg_destination_mgr pub;
    unsigned char *buffer;
    size_t capacity;
} growing_destination;

static void destination_start(j_compress_ptr cinfo) { (void)cinfo; }

static boolean destination_grow(j_compress_ptr cinfo) {
    growing_destination *d = (growing_destination *)cinfo->dest;
    size_t used = d->capacity;  // libjpeg asks only when the whole buffer is full
    if (d->capacity > SIZE_MAX / 2) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 10);
    unsigned char *grown = realloc(d->buffer, d->capacity * 2);
    if (!grown) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 10);
    d->buffer = grown;
    d->capacity *= 2;
    d->pub.next_output_byte = grown + used;
    d->pub.free_in_buffer = d->capacity - used;
    return TRUE;
}

static void destination_end(j_compress_ptr cinfo) { (void)cinfo; }

// MARK: - Markers

static void write_marker(j_compress_ptr cinfo, int marker, const char *header, size_t header_length,
                         const unsigned char *payload, size_t length) {
    if (!payload || length == 0 || header_length + length > 65533) return;  // a segment holds 65 533 bytes
    jpeg_write_m_header(cinfo, marker, (unsigned int)(header_length + length));
    for (size_t i = 0; i < header_length; i++) jpeg_write_m_byte(cinfo, (unsigned char)header[i]);
    for (size_t i = 0; i < length; i++) jpeg_write_m_byte(cinfo, payload[i]);
}

// The ICC profile in APP2 chunks of "ICC_PROFILE\0", sequence number, count, up to 65 519 bytes
// (ICC.1 Annex B.4).
static void write_icc(j_compress_ptr cinfo, const unsigned char *profile, size_t length) {
    const size_t chunk = 65533 - 14;
    if (!profile || length == 0) return;
    size_t count = (length + chunk - 1) / chunk;
    if (count > 255) return;
    for (size_t i = 0; i < count; i++) {
        size_t start = i * chunk, size = length - start < chunk ? length - start : chunk;
        jpeg_write_m_header(cinfo, JPEG_APP0 + 2, (unsigned int)(14 + size));
        const char *name = "ICC_PROFILE";
        for (int k = 0; k < 12; k++) jpeg_write_m_byte(cinfo, (unsigned char)name[k]);  // with its NUL
        jpeg_write_m_byte(cinfo, (int)(i + 1));
        jpeg_write_m_byte(cinfo, (int)count);
        for (size_t k = 0; k < size; k++) jpeg_write_m_byte(cinfo, profile[start + k]);
    }
}

// MARK: - The coefficient path

// One iMCU row of samples at full resolution: Y, Cb, Cr (or Y alone), `padded_width` wide.
typedef struct {
    unsigned char *planes[3];
    unsigned char *chroma[2];  // downsampled 2x2 when subsampling, else NULL
} strip_buffers;

static void convert_strip(const unsigned char *pixels, int width, int height, int components, size_t stride,
                          int first_row, int rows, int padded_width, unsigned char **planes) {
    for (int r = 0; r < rows; r++) {
        int y = first_row + r < height ? first_row + r : height - 1;  // rows past the bottom repeat the last
        const unsigned char *source = pixels + (size_t)y * stride;
        unsigned char *luma = planes[0] + (size_t)r * padded_width;
        if (components == 1) {
            memcpy(luma, source, (size_t)width);
        } else {
            unsigned char *cb = planes[1] + (size_t)r * padded_width, *cr = planes[2] + (size_t)r * padded_width;
            for (int x = 0; x < width; x++) {
                // jccolor.c's fixed point: 16 fractional bits, Y rounded, Cb and Cr offset by 128.
                int red = source[3 * x], green = source[3 * x + 1], blue = source[3 * x + 2];
                luma[x] = (unsigned char)((19595 * red + 38470 * green + 7471 * blue + 32768) >> 16);
                cb[x] = (unsigned char)((-11059 * red - 21709 * green + 32768 * blue + (128 << 16) + 32767) >> 16);
                cr[x] = (unsigned char)((32768 * red - 27439 * green - 5329 * blue + (128 << 16) + 32767) >> 16);
            }
        }
        for (int c = 0; c < components; c++) {  // columns past the right edge repeat the last
            unsigned char *row = planes[c] + (size_t)r * padded_width;
            memset(row + width, row[width - 1], (size_t)(padded_width - width));
        }
    }
}

// jcsample.c's h2v2_downsample: the mean of each 2x2, the bias alternating 1, 2 to avoid drift.
static void downsample_strip(const unsigned char *plane, int padded_width, int rows, unsigned char *out) {
    int out_width = padded_width / 2;
    for (int r = 0; r < rows / 2; r++) {
        const unsigned char *top = plane + (size_t)(2 * r) * padded_width, *bottom = top + padded_width;
        unsigned char *target = out + (size_t)r * out_width;
        for (int x = 0; x < out_width; x++) {
            int bias = 1 + (x & 1);
            target[x] = (unsigned char)((top[2 * x] + top[2 * x + 1] + bottom[2 * x] + bottom[2 * x + 1] + bias) >> 2);
        }
    }
}

static JDIMENSION round_up(JDIMENSION value, int multiple) {
    return (value + multiple - 1) / multiple * multiple;
}

// Computes and quantises every block into coefficient arrays, then has libjpeg write them. Errors
// leave by longjmp (through libjpeg's error manager): the strip buffers are in libjpeg's image pool.
static void write_coefficients(j_compress_ptr cinfo, const unsigned char *pixels, int width, int height, int components,
                               size_t stride, int trellis) {
    int max_h = 1, max_v = 1;
    for (int c = 0; c < components; c++) {
        if (cinfo->comp_info[c].h_samp_factor > max_h) max_h = cinfo->comp_info[c].h_samp_factor;
        if (cinfo->comp_info[c].v_samp_factor > max_v) max_v = cinfo->comp_info[c].v_samp_factor;
    }
    const int mcu_width = DCTSIZE * max_h, mcu_height = DCTSIZE * max_v;
    const int padded_width = (int)round_up((JDIMENSION)width, mcu_width);
    const int mcu_rows = (height + mcu_height - 1) / mcu_height;
    j_common_ptr common = (j_common_ptr)cinfo;

    // libjpeg keeps this list (not a copy) until jpeg_finish_compress: it lives in its image pool.
    jvirt_barray_ptr *arrays = (*cinfo->mem->alloc_small)(common, JPOOL_IMAGE, sizeof(jvirt_barray_ptr) * 3);
    JDIMENSION blocks_wide[3], blocks_high[3];
    for (int c = 0; c < components; c++) {
        jpeg_component_info *component = &cinfo->comp_info[c];
        blocks_wide[c] = ((JDIMENSION)width * component->h_samp_factor + max_h * DCTSIZE - 1) / (max_h * DCTSIZE);
        blocks_high[c] = ((JDIMENSION)height * component->v_samp_factor + max_v * DCTSIZE - 1) / (max_v * DCTSIZE);
        arrays[c] = (*cinfo->mem->request_virt_barray)(common, JPOOL_IMAGE, TRUE, round_up(blocks_wide[c], component->h_samp_factor),
                                                       round_up(blocks_high[c], component->v_samp_factor), component->v_samp_factor);
    }
    (*cinfo->mem->realize_virt_arrays)(common);

    strip_buffers strip;
    memset(&strip, 0, sizeof strip);
    for (int c = 0; c < components; c++) {
        strip.planes[c] = (*cinfo->mem->alloc_large)(common, JPOOL_IMAGE, (size_t)padded_width * mcu_height);
        if (c > 0 && cinfo->comp_info[c].h_samp_factor < max_h) {
            strip.chroma[c - 1] = (*cinfo->mem->alloc_large)(common, JPOOL_IMAGE, (size_t)padded_width * mcu_height / 4);
        }
    }
    float (*dct)[DCTSIZE2] = (*cinfo->mem->alloc_large)(common, JPOOL_IMAGE, sizeof(float) * DCTSIZE2 * (blocks_wide[0] + 1));
    imagery_code_lengths lengths[2];
    imagery_code_lengths_of(cinfo->dc_huff_tbl_ptrs[0], cinfo->ac_huff_tbl_ptrs[0], &lengths[0]);
    imagery_code_lengths_of(cinfo->dc_huff_tbl_ptrs[1], cinfo->ac_huff_tbl_ptrs[1], &lengths[1]);
    int last_dc[3] = {0, 0, 0};

    for (int m = 0; m < mcu_rows; m++) {
        convert_strip(pixels, width, height, components, stride, m * mcu_height, mcu_height, padded_width, strip.planes);
        for (int c = 0; c < components; c++) {
            jpeg_component_info *component = &cinfo->comp_info[c];
            const unsigned char *plane = strip.planes[c];
            int plane_width = padded_width;
            if (c > 0 && strip.chroma[c - 1]) {
                downsample_strip(strip.planes[c], padded_width, mcu_height, strip.chroma[c - 1]);
                plane = strip.chroma[c - 1];
                plane_width = padded_width / 2;
            }
            const UINT16 *quant = cinfo->quant_tbl_ptrs[component->quant_tbl_no]->quantval;
            for (int v = 0; v < component->v_samp_factor; v++) {
                JDIMENSION block_row = (JDIMENSION)(m * component->v_samp_factor + v);
                if (block_row >= blocks_high[c]) break;
                JBLOCKROW row = (*cinfo->mem->access_virt_barray)(common, arrays[c], block_row, 1, TRUE)[0];
                const unsigned char *samples = plane + (size_t)v * DCTSIZE * plane_width;
                for (JDIMENSION b = 0; b < blocks_wide[c]; b++) imagery_forward_dct(samples + b * DCTSIZE, (size_t)plane_width, dct[b]);
                if (trellis) {
                    if (imagery_trellis_quantise((const float (*)[DCTSIZE2])dct, row, (int)blocks_wide[c], quant,
                                                 &lengths[component->ac_tbl_no ? 1 : 0], &last_dc[c]) != 0) {
                        ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 11);
                    }
                } else {
                    for (JDIMENSION b = 0; b < blocks_wide[c]; b++) imagery_round_quantise(dct[b], row[b], quant);
                }
            }
        }
    }
    jpeg_write_coefficients(cinfo, arrays);
}

// MARK: - Encoding

static void set_error(char *error, size_t capacity, const char *message) {
    if (!error || capacity == 0) return;
    snprintf(error, capacity, "%s", message);
}

int imagery_jpeg_encode(const unsigned char *pixels, int width, int height, int components, size_t stride,
                        const imagery_jpeg_encode_settings *settings, unsigned char **out, size_t *out_length,
                        char *error, size_t error_capacity) {
    if (out) *out = NULL;
    if (out_length) *out_length = 0;
    if (!pixels || !settings || !out || !out_length || width <= 0 || height <= 0 || width > JPEG_MAX_DIMENSION
        || height > JPEG_MAX_DIMENSION || (components != 1 && components != 3) || stride < (size_t)width * components) {
        set_error(error, error_capacity, "bad arguments to the JPEG encoder");
        return IMAGERY_JPEG_UNSUPPORTED;
    }
    struct jpeg_compress_struct cinfo;
    encode_error_manager errors;
    growing_destination destination;
    memset(&cinfo, 0, sizeof cinfo);
    memset(&destination, 0, sizeof destination);
    cinfo.err = jpeg_std_error(&errors.pub);
    errors.pub.error_exit = encode_fail;
    errors.pub.emit_message = encode_ignore_message;
    errors.pub.output_message = encode_print_nothing;
    errors.status = IMAGERY_JPEG_OK;
    if (setjmp(errors.jump)) {
        jpeg_destroy_compress(&cinfo);
        free(destination.buffer);
        set_error(error, error_capacity, errors.message);
        return errors.status;
    }
    jpeg_create_compress(&cinfo);

    // Start at an eighth of the raw size (a typical ratio at quality 80), at least 16 KiB.
    destination.capacity = (size_t)width * height * components / 8;
    if (destination.capacity < 16384) destination.capacity = 16384;
    destination.buffer = malloc(destination.capacity);
    if (!destination.buffer) ERREXIT1(&cinfo, JERR_OUT_OF_MEMORY, 10);
    destination.pub.next_output_byte = destination.buffer;
    destination.pub.free_in_buffer = destination.capacity;
    destination.pub.init_destination = destination_start;
    destination.pub.empty_output_buffer = destination_grow;
    destination.pub.term_destination = destination_end;
    cinfo.dest = &destination.pub;

    cinfo.image_width = (JDIMENSION)width;
    cinfo.image_height = (JDIMENSION)height;
    cinfo.input_components = components;
    cinfo.in_color_space = components == 3 ? JCS_RGB : JCS_GRAYSCALE;
    jpeg_set_defaults(&cinfo);
    int quality = settings->quality < 1 ? 1 : settings->quality > 100 ? 100 : settings->quality;
    if (settings->tables == IMAGERY_JPEG_TABLES_TUNED) {
        int scale = jpeg_quality_scaling(quality);
        jpeg_add_quant_table(&cinfo, 0, tuned_table, scale, TRUE);
        jpeg_add_quant_table(&cinfo, 1, tuned_table, scale, TRUE);
    } else {
        jpeg_set_quality(&cinfo, quality, TRUE);
    }
    if (components == 3 && settings->full_chroma) {
        cinfo.comp_info[0].h_samp_factor = 1;
        cinfo.comp_info[0].v_samp_factor = 1;
    }
    cinfo.optimize_coding = TRUE;
    cinfo.write_JFIF_header = FALSE;  // 18 bytes that say nothing here (YCbCr or grey, no density): as libvips' strip
    if (settings->progressive) jpeg_simple_progression(&cinfo);

    write_coefficients(&cinfo, pixels, width, height, components, stride, settings->trellis);
    write_marker(&cinfo, JPEG_APP0 + 1, "", 0, settings->exif, settings->exif_length);
    static const char xmp_namespace[] = "http://ns.adobe.com/xap/1.0/";  // written with its NUL
    write_marker(&cinfo, JPEG_APP0 + 1, xmp_namespace, sizeof xmp_namespace, settings->xmp, settings->xmp_length);
    write_marker(&cinfo, JPEG_APP0 + 13, "", 0, settings->iptc, settings->iptc_length);
    write_icc(&cinfo, settings->icc, settings->icc_length);
    jpeg_finish_compress(&cinfo);

    *out_length = destination.capacity - destination.pub.free_in_buffer;
    *out = destination.buffer;
    jpeg_destroy_compress(&cinfo);
    return IMAGERY_JPEG_OK;
}

void imagery_jpeg_free_encoded(unsigned char *data) { free(data); }
