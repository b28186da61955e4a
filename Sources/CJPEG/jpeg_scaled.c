// JPEG decoding at 1/2, 1/4 or 1/8 scale that skips the progressive scans the scaled inverse
// DCT does not need. See include/jpeg_scaled.h for the contract.
//
// How it works
// ------------
// With DCT scaling, libjpeg-turbo runs a reduced inverse DCT per component: N x N pixels from
// each 8x8 block of coefficients, where N is the component's DCT_scaled_size (1, 2, 4 or 8). Those
// reduced transforms (jidctred.c, and the SIMD versions, which compute the same thing) read only
// some coefficients:
//
//   N = 1  jpeg_idct_1x1  the DC coefficient only
//   N = 2  jpeg_idct_2x2  rows and columns 0, 1, 3, 5, 7 (the odd frequencies all fold into
//                         the two outputs; rows/columns 2, 4, 6 cancel out)
//   N = 4  jpeg_idct_4x4  every row and column but 4
//   N = 8  the full IDCT  everything
//
// (Not "the top-left N x N coefficients": that is IJG libjpeg 7+'s scaled IDCT, not
// libjpeg-turbo's.) A progressive JPEG sends each component's coefficients in scans that each
// cover a band [Ss, Se] of zigzag positions. A scan none of whose coefficients is read, and that
// no kept refinement scan depends on, can be left out: libjpeg never sees it. At 1/8 scale that is
// every luma AC scan, and every chroma AC scan too unless the chroma is 4:2:0 (then chroma gets a
// 2x2 IDCT and needs almost all its coefficients).
//
// Why leaving scans out does not change the scans that are kept: libjpeg resets the entropy
// decoder at every scan (bit buffer, DC predictions, EOB run, restart counter), so a scan decodes
// the same whatever came before, except that a refinement scan (Ah > 0) reads the current
// values of the coefficients in its band. So when a scan is kept, every earlier scan of the same
// component whose band overlaps its band is kept too (computed backwards over the scans).
// Markers between scans (DHT, DQT, DRI, COM, APPn) are all kept. What skipping does change is
// libjpeg's record of which coefficients are known (coef_bits), which only block smoothing reads:
// smoothing is turned off when scans are skipped, and scans are only skipped when the full
// decode would not smooth either (it smooths only when some of the first 9 AC coefficients of a
// component are never completely sent).
//
// The stream is parsed once up front (markers, SOS headers, and a memchr for the marker that ends
// each scan's entropy-coded data). Anything irregular (garbage between markers, a bad scan header,
// an illegal progression, a truncated file in non-strict mode, a non-progressive or arithmetic-
// coded file) makes the decoder give libjpeg every byte, so libjpeg reports or handles it exactly
// as a plain decode would. The bytes reach libjpeg through a source manager that hands out the
// kept spans of the caller's buffer in place: nothing is copied.
//
// A preview (imagery_jpeg_decode_prefix) is the first part of a progressive file, cut where a scan
// ends: the parse takes the end of the data for an EOI, so the plan skips what the scale never reads
// in the scans that have arrived, as for a whole file; since the coefficients still to come are
// unknown, the smoothing rule above cannot hold, and smoothing is simply off wherever scans are skipped.

#include "include/jpeg_scaled.h"

#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>  // jpeglib.h needs FILE
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>

// MARK: - Which coefficients a component needs

// Natural (row-major) position of each zigzag index.
static const unsigned char zigzag_to_natural[64] = {
    0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,
    12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6,  7,  14, 21, 28,
    35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
    58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
};

// Whether libjpeg-turbo's inverse DCT producing `size` x `size` pixels reads row (or column)
// `index` of the coefficient block. The transforms are separable, so the same rule holds for
// rows and columns.
static int idct_reads(int size, int index, int textbook) {
    if (textbook) return index < size;  // the rule for IJG libjpeg 7+; kept to show it is wrong here
#if defined(LIBJPEG_TURBO_VERSION_NUMBER) || JPEG_LIB_VERSION < 70
    switch (size) {
    case 1: return index == 0;                     // jpeg_idct_1x1
    case 2: return index == 0 || (index & 1);      // jpeg_idct_2x2: 0, 1, 3, 5, 7
    case 4: return index != 4;                     // jpeg_idct_4x4: all but 4
    default: return 1;
    }
#else
    return size == 1 ? index == 0 : 1;             // another libjpeg: assume every coefficient counts
#endif
}

// Bit k set: the coefficient at zigzag index k is read by the IDCT of this size.
static uint64_t needed_coefficients(int size, int textbook) {
    uint64_t mask = 0;
    for (int k = 0; k < 64; k++) {
        int natural = zigzag_to_natural[k];
        if (idct_reads(size, natural / 8, textbook) && idct_reads(size, natural % 8, textbook)) mask |= (uint64_t)1 << k;
    }
    return mask;
}

static uint64_t band_mask(int ss, int se) {  // zigzag indices ss...se, 0 <= ss <= se <= 63
    uint64_t upto_se = se == 63 ? ~(uint64_t)0 : (((uint64_t)1 << (se + 1)) - 1);
    return upto_se & ~(((uint64_t)1 << ss) - 1);
}

static int component_idct_size(const jpeg_component_info *component) {
#if JPEG_LIB_VERSION >= 70
    if (component->DCT_h_scaled_size != component->DCT_v_scaled_size) return DCTSIZE;  // no skipping then
    return component->DCT_h_scaled_size;
#else
    return component->DCT_scaled_size;
#endif
}

// MARK: - The stream's layout

enum { MAX_FRAME_COMPONENTS = 4 };  // more (libjpeg allows 10) is not a picture we decode here

typedef struct {
    size_t start;       // offset of the SOS marker (its first 0xFF)
    size_t data_start;  // offset just after the SOS segment: the entropy-coded data
    size_t end;         // offset of the marker that ends the entropy-coded data
    int component_count;
    int component[MAX_FRAME_COMPONENTS];  // frame (SOF) indexes, increasing
    int ss, se, ah, al;
    int keep;
} scan_info;

typedef enum {
    LAYOUT_PROGRESSIVE,  // a progressive Huffman JPEG, parsed to its EOI, every scan legal: can skip
    LAYOUT_OTHER,        // baseline, arithmetic, or something irregular: give libjpeg everything
    LAYOUT_TRUNCATED,    // the data ends before the EOI marker
    LAYOUT_NO_MEMORY,
} layout_kind;

typedef struct {
    int component_count;
    int component_id[MAX_FRAME_COMPONENTS];
    scan_info *scans;
    size_t scan_count, scan_capacity;
    int final_bits[MAX_FRAME_COMPONENTS][64];  // libjpeg's coef_bits after the last scan (-1: never sent)
} stream_layout;

static unsigned read16(const unsigned char *p) { return (unsigned)p[0] << 8 | p[1]; }

// Offset of the marker ending the entropy-coded data that starts at `pos`: the first 0xFF (fill
// bytes included) not followed by a stuffed zero or a restart marker, as libjpeg reads it.
// `length` when the data ends first.
static size_t entropy_data_end(const unsigned char *data, size_t length, size_t pos) {
    while (pos < length) {
        const unsigned char *ff = memchr(data + pos, 0xFF, length - pos);
        if (ff == NULL) return length;
        size_t marker = (size_t)(ff - data), next = marker + 1;
        while (next < length && data[next] == 0xFF) next++;
        if (next >= length) return length;
        if (data[next] != 0x00 && (data[next] < 0xD0 || data[next] > 0xD7)) return marker;
        pos = next + 1;  // stuffed 0xFF data byte or RSTn: still inside the scan
    }
    return length;
}

// SOF2 payload (after the length): precision, height, width, components, 3 bytes per component.
static int parse_frame(const unsigned char *p, size_t n, stream_layout *layout) {
    if (n < 6) return 0;
    int count = p[5];
    if (count < 1 || count > MAX_FRAME_COMPONENTS || n != 6 + 3 * (size_t)count) return 0;
    for (int c = 0; c < count; c++) {
        layout->component_id[c] = p[6 + 3 * c];
        for (int other = 0; other < c; other++) {
            if (layout->component_id[other] == layout->component_id[c]) return 0;  // libjpeg renames duplicates
        }
    }
    layout->component_count = count;
    for (int c = 0; c < count; c++) {
        for (int k = 0; k < 64; k++) layout->final_bits[c][k] = -1;
    }
    return 1;
}

// SOS payload: component count, (id, tables) per component, Ss, Se, Ah/Al. Accepts only what
// libjpeg accepts without an error or a warning, and updates the progression state as
// libjpeg's start_pass_phuff_decoder does.
static int parse_scan(const unsigned char *p, size_t n, stream_layout *layout, scan_info *scan) {
    if (n < 1) return 0;
    int count = p[0];
    if (count < 1 || count > MAX_FRAME_COMPONENTS || n != 4 + 2 * (size_t)count) return 0;
    scan->component_count = count;
    for (int i = 0; i < count; i++) {
        int found = -1;
        for (int c = 0; c < layout->component_count; c++) {
            if (layout->component_id[c] == p[1 + 2 * i]) found = c;
        }
        // Unknown ids and components out of frame order are libjpeg errors.
        if (found < 0 || (i > 0 && found <= scan->component[i - 1])) return 0;
        scan->component[i] = found;
    }
    const unsigned char *parameters = p + 1 + 2 * count;
    scan->ss = parameters[0];
    scan->se = parameters[1];
    scan->ah = parameters[2] >> 4;
    scan->al = parameters[2] & 15;
    if (scan->ss == 0) {
        if (scan->se != 0) return 0;
    } else if (scan->se < scan->ss || scan->se > 63 || count != 1) {
        return 0;
    }
    if ((scan->ah != 0 && scan->al != scan->ah - 1) || scan->al > 13) return 0;
    for (int i = 0; i < count; i++) {
        int *bits = layout->final_bits[scan->component[i]];
        if (scan->ss > 0 && bits[0] < 0) return 0;  // AC before DC
        for (int k = scan->ss; k <= scan->se; k++) {
            if (scan->ah != (bits[k] < 0 ? 0 : bits[k])) return 0;  // refinement out of order
            bits[k] = scan->al;
        }
    }
    return 1;
}

static int append_scan(stream_layout *layout, const scan_info *scan) {
    if (layout->scan_count == layout->scan_capacity) {
        size_t capacity = layout->scan_capacity ? 2 * layout->scan_capacity : 16;
        scan_info *grown = realloc(layout->scans, capacity * sizeof *grown);
        if (grown == NULL) return 0;
        layout->scans = grown;
        layout->scan_capacity = capacity;
    }
    layout->scans[layout->scan_count++] = *scan;
    return 1;
}

// Walks the markers from SOI to EOI. Every read is checked against `length`. `prefix`: the end of the
// data after a scan (or between segments) stands for an EOI marker (a preview of the scans so far).
static layout_kind parse_layout(const unsigned char *data, size_t length, stream_layout *layout, int prefix) {
    int saw_frame = 0;
    size_t pos = 2;  // after SOI, checked by the caller
    for (;;) {
        if (pos >= length) return prefix && saw_frame && layout->scan_count > 0 ? LAYOUT_PROGRESSIVE : LAYOUT_TRUNCATED;
        if (data[pos] != 0xFF) return LAYOUT_OTHER;  // garbage between segments: libjpeg warns
        size_t marker_start = pos;
        while (pos < length && data[pos] == 0xFF) pos++;  // fill bytes
        if (pos >= length) return LAYOUT_TRUNCATED;
        int code = data[pos++];
        if (code == 0xD9) return saw_frame && layout->scan_count > 0 ? LAYOUT_PROGRESSIVE : LAYOUT_OTHER;  // EOI
        if ((code >= 0xD0 && code <= 0xD7) || code == 0x01) continue;  // RSTn, TEM: no parameters, ignored
        if (code == 0x00 || code == 0xD8) return LAYOUT_OTHER;         // libjpeg: warning or error
        if (length - pos < 2) return LAYOUT_TRUNCATED;
        size_t segment_length = read16(data + pos);
        if (segment_length < 2) return LAYOUT_OTHER;  // libjpeg would not skip it by its length
        if (segment_length > length - pos) return LAYOUT_TRUNCATED;
        const unsigned char *payload = data + pos + 2;
        size_t payload_length = segment_length - 2;
        size_t segment_end = pos + segment_length;

        if (code == 0xC2) {  // SOF2: progressive, Huffman
            if (saw_frame || !parse_frame(payload, payload_length, layout)) return LAYOUT_OTHER;
            saw_frame = 1;
        } else if (code >= 0xC0 && code <= 0xCF && code != 0xC4 && code != 0xCC) {
            return LAYOUT_OTHER;  // another SOF (nothing to skip) or JPG: libjpeg decides
        } else if (code == 0xDA) {  // SOS
            scan_info scan = {0};
            if (!saw_frame || !parse_scan(payload, payload_length, layout, &scan)) return LAYOUT_OTHER;
            scan.start = marker_start;
            scan.data_start = segment_end;
            scan.end = entropy_data_end(data, length, segment_end);
            if (!append_scan(layout, &scan)) return LAYOUT_NO_MEMORY;
            if (scan.end >= length) return prefix ? LAYOUT_PROGRESSIVE : LAYOUT_TRUNCATED;
            pos = scan.end;
            continue;
        } else if (!(code == 0xC4 || code == 0xCC || code == 0xDB || code == 0xDC || code == 0xDD ||
                     (code >= 0xE0 && code <= 0xEF) || code == 0xFE)) {
            return LAYOUT_OTHER;  // DHP, EXP, JPGn, reserved: libjpeg errors
        }
        // DHT, DAC, DQT, DNL, DRI, APPn, COM: kept as they are; libjpeg checks their contents.
        pos = segment_end;
    }
}

// MARK: - Errors

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    int strict;
    int status;
    char message[JMSG_LENGTH_MAX];
} error_manager;

static int status_for(int code) {
    switch (code) {
    case JERR_SOF_UNSUPPORTED:       // lossless, hierarchical
    case JERR_BAD_PRECISION:         // 12-bit
    case JERR_NOT_COMPILED:
    case JERR_NOTIMPL:
    case JERR_ARITH_NOTIMPL:
    case JERR_FRACT_SAMPLE_NOTIMPL:  // odd sampling factors
    case JERR_CONVERSION_NOTIMPL:
        return IMAGERY_JPEG_UNSUPPORTED;
    case JERR_OUT_OF_MEMORY:
        return IMAGERY_JPEG_NO_MEMORY;
    default:
        return IMAGERY_JPEG_CORRUPT;
    }
}

static void fail_with_libjpeg_message(j_common_ptr cinfo) {
    error_manager *error = (error_manager *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, error->message);
    error->status = status_for(cinfo->err->msg_code);
    longjmp(error->jump, 1);
}

static void on_message(j_common_ptr cinfo, int level) {
    error_manager *error = (error_manager *)cinfo->err;
    if (level >= 0) return;  // trace messages
    error->pub.num_warnings++;
    if (!error->strict) return;
    (*cinfo->err->format_message)(cinfo, error->message);
    error->status = IMAGERY_JPEG_CORRUPT;
    longjmp(error->jump, 1);
}

static void print_nothing(j_common_ptr cinfo) { (void)cinfo; }

// MARK: - Source manager: the kept spans of the caller's buffer, in place

typedef struct {
    size_t start, end;
} byte_range;

typedef struct {
    struct jpeg_source_mgr pub;
    const unsigned char *data;
    size_t length;
    size_t position;          // offset of the next byte to hand out
    size_t limit;             // hand out nothing at or past this offset (the header phase; else length)
    int went_past_limit;      // libjpeg wanted more than the headers before the plan was made
    const byte_range *skips;  // ranges libjpeg never sees, in order, not overlapping
    size_t skip_count, next_skip;
} span_source;

static void source_init(j_decompress_ptr cinfo) { (void)cinfo; }
static void source_term(j_decompress_ptr cinfo) { (void)cinfo; }

// What libjpeg reads once the data is exhausted, as with jpeg_mem_src: an EOI marker (after a
// "premature end of JPEG file" warning).
static const JOCTET fake_eoi[2] = {0xFF, JPEG_EOI};

static boolean source_fill(j_decompress_ptr cinfo) {
    span_source *source = (span_source *)cinfo->src;
    while (source->next_skip < source->skip_count && source->skips[source->next_skip].start <= source->position) {
        if (source->skips[source->next_skip].end > source->position) source->position = source->skips[source->next_skip].end;
        source->next_skip++;
    }
    if (source->position >= source->limit && source->limit < source->length) {
        source->limit = source->length;  // no plan yet and libjpeg reads on: it gets everything
        source->went_past_limit = 1;
    }
    size_t end = source->limit;
    if (source->next_skip < source->skip_count && source->skips[source->next_skip].start < end) {
        end = source->skips[source->next_skip].start;
    }
    if (source->position >= end) {  // the end of the data: what jpeg_mem_src does
        WARNMS(cinfo, JWRN_JPEG_EOF);
        source->pub.next_input_byte = fake_eoi;
        source->pub.bytes_in_buffer = 2;
        return TRUE;
    }
    source->pub.next_input_byte = source->data + source->position;
    source->pub.bytes_in_buffer = end - source->position;
    source->position = end;
    return TRUE;
}

static void source_skip(j_decompress_ptr cinfo, long count) {
    span_source *source = (span_source *)cinfo->src;
    if (count <= 0) return;
    size_t remaining = (size_t)count;
    while (remaining > source->pub.bytes_in_buffer) {
        remaining -= source->pub.bytes_in_buffer;
        source->pub.bytes_in_buffer = 0;
        source_fill(cinfo);
        if (source->pub.next_input_byte == fake_eoi) return;  // the data ran out: leave the EOI to be read
    }
    source->pub.next_input_byte += remaining;
    source->pub.bytes_in_buffer -= remaining;
}

// MARK: - Decoding

// Measurement hooks for the test harness (which #includes this file). The public function uses
// all zeros: skip what is not needed, exactly.
typedef struct {
    int keep_all_scans;           // give libjpeg every scan
    int stop_early;               // buffered-image mode: stop reading once the needed coefficients are final
    int drop_chroma_refinements;  // lossy: also drop AC refinement scans of components after the first
    int textbook_needed;          // needed = rows and columns < N (wrong for libjpeg-turbo)
    int prefix;                   // imagery_jpeg_decode_prefix: the data's end is a scan's end; skip whatever smoothing does
} decode_options;

typedef struct {
    struct jpeg_decompress_struct cinfo;  // zeroed by calloc, so jpeg_destroy is safe before creation
    error_manager error;
    span_source source;
    stream_layout layout;
    byte_range *skips;
    uint64_t needed[MAX_FRAME_COMPONENTS];  // per component, by zigzag index
    unsigned char *pixels;
    unsigned char *icc;       // the ICC profile, if the stream has one (libjpeg's malloc)
    unsigned int icc_length;
} decoder;

static void destroy(decoder *d) {
    jpeg_destroy_decompress(&d->cinfo);
    free(d->layout.scans);
    free(d->skips);
    free(d->pixels);
    free(d->icc);
    free(d);
}

// Decides which scans libjpeg gets, once jpeg_calc_output_dimensions has chosen each component's
// IDCT size. Leaves everything in when the stream is not one it can reason about.
static void plan_scans(decoder *d, const decode_options *options, int scale) {
    j_decompress_ptr cinfo = &d->cinfo;
    stream_layout *layout = &d->layout;
    // libjpeg must have read exactly the headers this parser saw, up to the first scan's data.
    if (d->source.went_past_limit || d->source.pub.bytes_in_buffer != 0 ||
        d->source.position != layout->scans[0].data_start || !cinfo->progressive_mode || cinfo->arith_code ||
        cinfo->num_components != layout->component_count) {
        return;
    }
    for (int c = 0; c < layout->component_count; c++) {
        if (cinfo->comp_info[c].component_id != layout->component_id[c]) return;
        // Smoothing in the full decode (some of the first 9 AC coefficients never final): no skipping,
        // which would otherwise change what libjpeg smooths. A preview skips all the same (smoothing
        // then off): its pixels need not be those of a decode of every scan.
        for (int k = 1; k <= 9 && !options->prefix; k++) {
            if (layout->final_bits[c][k] != 0) return;
        }
        d->needed[c] = needed_coefficients(component_idct_size(&cinfo->comp_info[c]), options->textbook_needed);
    }
    if (options->keep_all_scans) return;

    // Backwards: a scan is kept if its band holds a needed coefficient, or a coefficient a later
    // kept scan of the component refines (that scan decodes against the values this one sets).
    uint64_t required[MAX_FRAME_COMPONENTS];
    memcpy(required, d->needed, sizeof required);
    size_t skipped = 0;
    for (size_t i = layout->scan_count; i-- > 0;) {
        scan_info *scan = &layout->scans[i];
        if (scan->ss == 0) {
            scan->keep = 1;  // DC, first or refinement: always needed
            continue;
        }
        int c = scan->component[0];
        uint64_t band = band_mask(scan->ss, scan->se);
        if (options->drop_chroma_refinements && scale == 8 && c > 0 && scan->ah > 0) {
            scan->keep = 0;
        } else {
            scan->keep = (band & required[c]) != 0;
        }
        if (scan->keep) {
            required[c] |= band;
        } else {
            skipped++;
        }
    }
    if (skipped == 0) return;
    d->skips = malloc(skipped * sizeof *d->skips);
    if (d->skips == NULL) {  // decode everything instead
        for (size_t i = 0; i < layout->scan_count; i++) layout->scans[i].keep = 1;
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < layout->scan_count; i++) {
        if (!layout->scans[i].keep) d->skips[n++] = (byte_range){layout->scans[i].start, layout->scans[i].end};
    }
    d->source.skips = d->skips;
    d->source.skip_count = n;
    d->source.next_skip = 0;
    cinfo->do_block_smoothing = FALSE;  // no estimated coefficients where scans were left out
}

// Buffered-image mode: whether every needed coefficient of every component is at its final
// precision, so that the rest of the input can be left unread.
static int needed_coefficients_final(decoder *d) {
    for (int c = 0; c < d->layout.component_count; c++) {
        for (int k = 0; k < 64; k++) {
            if ((d->needed[c] >> k & 1) && d->cinfo.coef_bits[c][k] != d->layout.final_bits[c][k]) return 0;
        }
    }
    return 1;
}

static void read_pixels(decoder *d) {
    j_decompress_ptr cinfo = &d->cinfo;
    size_t stride = (size_t)cinfo->output_width * (size_t)cinfo->output_components;
    while (cinfo->output_scanline < cinfo->output_height) {
        JSAMPROW rows[16];
        JDIMENSION count = cinfo->output_height - cinfo->output_scanline;
        if (count > 16) count = 16;
        for (JDIMENSION i = 0; i < count; i++) rows[i] = d->pixels + (size_t)(cinfo->output_scanline + i) * stride;
        if (jpeg_read_scanlines(cinfo, rows, count) == 0) ERREXIT(cinfo, JERR_INPUT_EMPTY);  // cannot happen: never suspends
    }
}

static int fail(int status, char *error, size_t capacity, const char *message) {
    if (error != NULL && capacity > 0) snprintf(error, capacity, "%s", message);
    return status;
}

static int decode(const void *bytes, size_t length, int scale, int strict, size_t max_pixels,
                  const decode_options *options, imagery_jpeg_image *out, char *error, size_t error_capacity) {
    if (error != NULL && error_capacity > 0) error[0] = '\0';
    if (out == NULL) return fail(IMAGERY_JPEG_UNSUPPORTED, error, error_capacity, "no output image");
    memset(out, 0, sizeof *out);
    if (scale != 1 && scale != 2 && scale != 4 && scale != 8) {
        return fail(IMAGERY_JPEG_UNSUPPORTED, error, error_capacity, "scale must be 1, 2, 4 or 8");
    }
    const unsigned char *data = bytes;
    if (data == NULL || length < 2 || data[0] != 0xFF || data[1] != 0xD8) {
        return fail(IMAGERY_JPEG_CORRUPT, error, error_capacity, "not a JPEG file (no SOI marker)");
    }

    decoder *d = calloc(1, sizeof *d);
    if (d == NULL) return fail(IMAGERY_JPEG_NO_MEMORY, error, error_capacity, "out of memory");
    layout_kind kind = parse_layout(data, length, &d->layout, options->prefix);
    if (kind == LAYOUT_NO_MEMORY) {
        destroy(d);
        return fail(IMAGERY_JPEG_NO_MEMORY, error, error_capacity, "out of memory");
    }
    if (kind == LAYOUT_TRUNCATED && strict) {
        destroy(d);
        return fail(IMAGERY_JPEG_CORRUPT, error, error_capacity, "Premature end of JPEG file (no EOI marker)");
    }
    int can_skip = kind == LAYOUT_PROGRESSIVE;

    d->error.strict = strict;
    d->cinfo.err = jpeg_std_error(&d->error.pub);
    d->error.pub.error_exit = fail_with_libjpeg_message;
    d->error.pub.emit_message = on_message;
    d->error.pub.output_message = print_nothing;
    if (setjmp(d->error.jump)) {  // libjpeg failed (or warned, in strict mode)
        int status = d->error.status;
        fail(status, error, error_capacity, d->error.message);
        memset(out, 0, sizeof *out);
        destroy(d);
        return status;
    }
    jpeg_create_decompress(&d->cinfo);
    j_decompress_ptr cinfo = &d->cinfo;

    d->source.pub.init_source = source_init;
    d->source.pub.fill_input_buffer = source_fill;
    d->source.pub.skip_input_data = source_skip;
    d->source.pub.resync_to_restart = jpeg_resync_to_restart;
    d->source.pub.term_source = source_term;
    d->source.data = data;
    d->source.length = length;
    // Until the plan is made, libjpeg gets the headers only: up to the first scan's data.
    d->source.limit = can_skip ? d->layout.scans[0].data_start : length;
    cinfo->src = &d->source.pub;

    jpeg_save_markers(cinfo, JPEG_APP0 + 2, 0xFFFF);  // ICC profile chunks
    jpeg_read_header(cinfo, TRUE);
    {
        JOCTET *icc = NULL;
        unsigned int icc_length = 0;
        if (jpeg_read_icc_profile(cinfo, &icc, &icc_length)) {
            d->icc = icc;
            d->icc_length = icc_length;
        }
    }
    switch (cinfo->jpeg_color_space) {
    case JCS_GRAYSCALE: cinfo->out_color_space = JCS_GRAYSCALE; break;
    case JCS_YCbCr:
    case JCS_RGB: cinfo->out_color_space = JCS_RGB; break;
    default: {  // CMYK, YCCK, unknown
        destroy(d);
        return fail(IMAGERY_JPEG_UNSUPPORTED, error, error_capacity, "not a greyscale, YCbCr or RGB JPEG");
    }
    }
    if (max_pixels != 0 && (uint64_t)cinfo->image_width * cinfo->image_height > (uint64_t)max_pixels) {
        char message[96];
        snprintf(message, sizeof message, "%ux%u pixels is over the limit of %zu", cinfo->image_width,
                 cinfo->image_height, max_pixels);
        destroy(d);
        return fail(IMAGERY_JPEG_TOO_LARGE, error, error_capacity, message);
    }
    cinfo->scale_num = 1;
    cinfo->scale_denom = (unsigned)scale;
    cinfo->dct_method = JDCT_ISLOW;
    cinfo->do_fancy_upsampling = TRUE;
    jpeg_calc_output_dimensions(cinfo);

    if (can_skip) plan_scans(d, options, scale);
    d->source.limit = length;  // from here on libjpeg may read everything (less the skipped ranges)
    int stop_early = options->stop_early && can_skip && cinfo->progressive_mode && d->needed[0] != 0;

    uint64_t size = (uint64_t)cinfo->output_width * cinfo->output_height * (uint64_t)cinfo->output_components;
    if (size == 0 || size > SIZE_MAX) ERREXIT(cinfo, JERR_WIDTH_OVERFLOW);
    d->pixels = malloc((size_t)size);
    if (d->pixels == NULL) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 100);

    if (stop_early) {
        cinfo->buffered_image = TRUE;
        cinfo->do_block_smoothing = FALSE;
        jpeg_start_decompress(cinfo);
        for (;;) {
            int status = jpeg_consume_input(cinfo);
            if (status == JPEG_REACHED_EOI || status == JPEG_SUSPENDED) break;
            if (status == JPEG_SCAN_COMPLETED && needed_coefficients_final(d)) break;
        }
        jpeg_start_output(cinfo, cinfo->input_scan_number);
        read_pixels(d);
        jpeg_finish_output(cinfo);
        out->scans_decoded = cinfo->input_scan_number;  // the parse saw the EOI: nothing more to check
    } else {
        jpeg_start_decompress(cinfo);
        read_pixels(d);
        if (strict) jpeg_finish_decompress(cinfo);  // reads up to EOI: a missing one is a warning, here an error
        out->scans_decoded = cinfo->input_scan_number;
    }

    out->width = (int)cinfo->output_width;
    out->height = (int)cinfo->output_height;
    out->components = cinfo->output_components;
    out->scans_in_file = can_skip ? (int)d->layout.scan_count : cinfo->input_scan_number;
    out->pixels = d->pixels;
    d->pixels = NULL;
    out->icc_profile = d->icc;
    out->icc_length = d->icc_length;
    d->icc = NULL;
    destroy(d);
    return IMAGERY_JPEG_OK;
}

int imagery_jpeg_decode_scaled(const void *data, size_t length, int scale, int strict, size_t max_pixels,
                               imagery_jpeg_image *out, char *error, size_t error_capacity) {
    static const decode_options exact = {0};
    return decode(data, length, scale, strict, max_pixels, &exact, out, error, error_capacity);
}

int imagery_jpeg_decode_prefix(const void *data, size_t length, int scale, size_t max_pixels,
                               imagery_jpeg_image *out, char *error, size_t error_capacity) {
    static const decode_options preview = {.prefix = 1};
    return decode(data, length, scale, 0, max_pixels, &preview, out, error, error_capacity);
}

void imagery_jpeg_free(imagery_jpeg_image *image) {
    if (image == NULL) return;
    free(image->pixels);
    free(image->icc_profile);
    memset(image, 0, sizeof *image);
}
