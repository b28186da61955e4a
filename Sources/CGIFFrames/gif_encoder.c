#include "gif_encoder.h"

#include <cgif.h>
#include <libimagequant.h>
#include <stdlib.h>
#include <string.h>

// Colours are counted and looked up in a grid of 64 levels a channel.
#define GRID_BITS 6
#define GRID_CELLS (1 << (3 * GRID_BITS))
#define UNKNOWN_CELL (-1)

// A histogram takes about this many pixels at most: longer animations give it every k-th frame, larger
// frames every k-th row.
#define HISTOGRAM_PIXELS (4 * 1024 * 1024)

// A frame the shared palette fits worse than this (root mean square, levels a channel) gets a palette
// of its own: a slideshow of unrelated pictures, not the frames of one scene.
#define LOCAL_PALETTE_ERROR 4.0

/// One grid cell of a histogram (at most HISTOGRAM_PIXELS pixels: the sums cannot overflow).
typedef struct {
    uint32_t sum[3];
    uint32_t count;
} Cell;

/// A palette in output order: the transparent colour, when there is one, first.
typedef struct {
    uint8_t rgb[256 * 3];
    int count;
    int transparent;  // 0, or -1: none
} Palette;

/// What one encode works with.
typedef struct {
    const uint8_t *pixels;
    size_t frame_pixels;
    int height, bands, any_transparent;
    liq_attr *attr;
    int16_t *grid;                 // GRID_CELLS: palette entry of each cell, or UNKNOWN_CELL
    uint64_t sums[256][4];         // per entry: the pixels mapped to it (r, g, b, count)
} Encoder;

typedef struct {
    uint8_t *bytes;
    size_t length, capacity;
    int failed;
} Output;

static void pixel_at(const uint8_t *p, int bands, uint8_t rgba[4]) {
    switch (bands) {
    case 1: rgba[0] = rgba[1] = rgba[2] = p[0]; rgba[3] = 255; break;
    case 2: rgba[0] = rgba[1] = rgba[2] = p[0]; rgba[3] = p[1]; break;
    case 3: rgba[0] = p[0]; rgba[1] = p[1]; rgba[2] = p[2]; rgba[3] = 255; break;
    default: rgba[0] = p[0]; rgba[1] = p[1]; rgba[2] = p[2]; rgba[3] = p[3]; break;
    }
    if (rgba[3] < 128) rgba[0] = rgba[1] = rgba[2] = rgba[3] = 0;
    else rgba[3] = 255;
}

static inline int cell_key(const uint8_t rgba[4]) {
    const int shift = 8 - GRID_BITS;
    return ((rgba[0] >> shift) << (2 * GRID_BITS)) | ((rgba[1] >> shift) << GRID_BITS) | (rgba[2] >> shift);
}

/// A palette for frames `first`, `first + stride`, ... before `end`: opaque pixels counted in the grid's
/// cells, each cell given to libimagequant as the mean of its pixels (thousands of colours instead of
/// every pixel: 4 times faster than its own histogram of the pixels, and as close).
static int make_palette(Encoder *e, int first, int end, int stride, Palette *palette, const char **error) {
    // Zeroed pages from the kernel: only the cells colours fall in are ever touched.
    Cell *cells = calloc(GRID_CELLS, sizeof(Cell));
    liq_histogram_entry *entries = NULL;
    liq_histogram *histogram = NULL;
    liq_result *result = NULL;
    int status = -1;
    *error = "out of memory";
    if (!cells) return -1;
    const size_t frame_bytes = e->frame_pixels * e->bands;
    const size_t row_stride = e->frame_pixels > HISTOGRAM_PIXELS ? (e->frame_pixels + HISTOGRAM_PIXELS - 1) / HISTOGRAM_PIXELS : 1;
    const size_t width = e->frame_pixels / e->height;
    for (int f = first; f < end; f += stride) {
        for (size_t y = 0; y < (size_t)e->height; y += row_stride) {
            const uint8_t *p = e->pixels + frame_bytes * f + y * width * e->bands;
            for (size_t x = 0; x < width; x++, p += e->bands) {
                uint8_t rgba[4];
                pixel_at(p, e->bands, rgba);
                if (rgba[3] == 0) continue;
                Cell *cell = &cells[cell_key(rgba)];
                cell->sum[0] += rgba[0];
                cell->sum[1] += rgba[1];
                cell->sum[2] += rgba[2];
                cell->count += 1;
            }
        }
    }
    int count = 0;
    for (int i = 0; i < GRID_CELLS; i++) count += cells[i].count != 0;
    entries = malloc(sizeof(liq_histogram_entry) * (count ? count : 1));
    if (!entries) goto done;
    count = 0;
    for (int i = 0; i < GRID_CELLS; i++) {
        const uint32_t n = cells[i].count;
        if (!n) continue;
        entries[count].color = (liq_color){ (uint8_t)((cells[i].sum[0] + n / 2) / n), (uint8_t)((cells[i].sum[1] + n / 2) / n),
                                            (uint8_t)((cells[i].sum[2] + n / 2) / n), 255 };
        entries[count].count = n;
        count++;
    }
    if (count == 0) {
        // No opaque pixel (frames wholly transparent): libimagequant makes no palette of no colour
        // (found by fuzzing: such an animation could not be written). Transparent, and black.
        palette->transparent = e->any_transparent ? 0 : -1;
        memset(palette->rgb, 0, 6);
        palette->count = 2;
        status = 0;
        *error = NULL;
        goto done;
    }
    *error = "the GIF palette could not be made";
    histogram = liq_histogram_create(e->attr);
    if (!histogram) goto done;
    if (count && liq_histogram_add_colors(histogram, e->attr, entries, count, 0) != LIQ_OK) goto done;
    // Transparency anywhere in the animation: every palette keeps a transparent colour.
    if (e->any_transparent && liq_histogram_add_fixed_color(histogram, (liq_color){ 0, 0, 0, 0 }, 0) != LIQ_OK) goto done;
    if (liq_histogram_quantize(histogram, e->attr, &result) != LIQ_OK) goto done;
    const liq_palette *colors = liq_get_palette(result);
    palette->count = (int)colors->count;
    palette->transparent = -1;
    int out = e->any_transparent ? 1 : 0;
    for (int i = 0; i < (int)colors->count; i++) {
        const liq_color c = colors->entries[i];
        if (c.a < 128 && palette->transparent < 0) {
            palette->transparent = 0;
            palette->rgb[0] = palette->rgb[1] = palette->rgb[2] = 0;
            continue;
        }
        if (out >= 256) break;
        palette->rgb[3 * out] = c.r;
        palette->rgb[3 * out + 1] = c.g;
        palette->rgb[3 * out + 2] = c.b;
        out++;
    }
    if (palette->transparent < 0 && e->any_transparent) {
        // libimagequant kept no transparent colour (cannot happen with the fixed one): shift back.
        memmove(palette->rgb, palette->rgb + 3, 3 * (out - 1));
        out--;
    }
    palette->count = out;
    status = 0;
    *error = NULL;
done:
    if (result) liq_result_destroy(result);
    if (histogram) liq_histogram_destroy(histogram);
    free(entries);
    free(cells);
    return status;
}

static int nearest(const Palette *palette, int r, int g, int b) {
    int best = -1, best_distance = 1 << 30;
    for (int i = 0; i < palette->count; i++) {
        if (i == palette->transparent) continue;
        const int dr = palette->rgb[3 * i] - r, dg = palette->rgb[3 * i + 1] - g, db = palette->rgb[3 * i + 2] - b;
        const int distance = dr * dr + dg * dg + db * db;
        if (distance < best_distance) {
            best_distance = distance;
            best = i;
        }
    }
    return best < 0 ? 0 : best;
}

/// Maps frame `f` to `palette` (each pixel to the entry nearest its cell's centre: no dithering, since
/// noise that changes from frame to frame flickers), adding the pixels to `e->sums`. Returns the root
/// mean square error of the frame's opaque pixels, levels a channel.
static double map_frame(Encoder *e, int f, const Palette *palette, uint8_t *index) {
    const int shift = 8 - GRID_BITS, half = 1 << (shift - 1);
    const uint8_t *p = e->pixels + e->frame_pixels * e->bands * f;
    uint64_t squared = 0, opaque = 0;
    for (size_t i = 0; i < e->frame_pixels; i++, p += e->bands) {
        uint8_t rgba[4];
        pixel_at(p, e->bands, rgba);
        if (rgba[3] == 0 && palette->transparent >= 0) {
            index[i] = (uint8_t)palette->transparent;
            continue;
        }
        const int key = cell_key(rgba);
        int entry = e->grid[key];
        if (entry == UNKNOWN_CELL) {
            entry = nearest(palette, ((rgba[0] >> shift) << shift) + half, ((rgba[1] >> shift) << shift) + half,
                            ((rgba[2] >> shift) << shift) + half);
            e->grid[key] = (int16_t)entry;
        }
        index[i] = (uint8_t)entry;
        uint64_t *sum = e->sums[entry];
        sum[0] += rgba[0];
        sum[1] += rgba[1];
        sum[2] += rgba[2];
        sum[3] += 1;
        const int dr = palette->rgb[3 * entry] - rgba[0], dg = palette->rgb[3 * entry + 1] - rgba[1],
                  db = palette->rgb[3 * entry + 2] - rgba[2];
        squared += (uint64_t)(dr * dr + dg * dg + db * db);
        opaque += 1;
    }
    return opaque ? __builtin_sqrt((double)squared / (3.0 * (double)opaque)) : 0;
}

/// Each colour moved to the mean of the pixels mapped to it (one k-means step: never a larger error).
static void refine(Encoder *e, Palette *palette) {
    for (int i = 0; i < palette->count; i++) {
        const uint64_t n = e->sums[i][3];
        if (i == palette->transparent || !n) continue;
        for (int c = 0; c < 3; c++) palette->rgb[3 * i + c] = (uint8_t)((e->sums[i][c] + n / 2) / n);
    }
}

static int write_output(void *context, const uint8_t *data, const size_t count) {
    Output *output = context;
    if (output->length + count > output->capacity) {
        size_t capacity = output->capacity ? output->capacity : 64 * 1024;
        while (capacity < output->length + count) capacity *= 2;
        uint8_t *grown = realloc(output->bytes, capacity);
        if (!grown) {
            output->failed = 1;
            return -1;
        }
        output->bytes = grown;
        output->capacity = capacity;
    }
    memcpy(output->bytes + output->length, data, count);
    output->length += count;
    return 0;
}

int imagery_gif_encode(const uint8_t *pixels, int width, int height, int bands, int frames,
                       const int *delays, int delay_count, int loop,
                       uint8_t **output, size_t *length, const char **error) {
    *output = NULL;
    *length = 0;
    if (width < 1 || height < 1 || width > 65535 || height > 65535 || frames < 1 || bands < 1 || bands > 4) {
        *error = "a GIF's frames must be 1 to 65535 pixels a side";
        return -1;
    }
    Encoder *e = calloc(1, sizeof(Encoder));
    Palette *shared = malloc(sizeof(Palette));
    Palette *locals = NULL;   // per frame, where the shared palette does not fit
    uint8_t *has_local = NULL;
    uint8_t *indices = NULL;
    CGIF *gif = NULL;
    Output out = { 0 };
    int status = -1;
    *error = "out of memory";
    if (!e || !shared) goto done;
    e->pixels = pixels;
    e->frame_pixels = (size_t)width * height;
    e->height = height;
    e->bands = bands;
    if (bands == 2 || bands == 4) {
        for (size_t i = 0; i < e->frame_pixels * frames && !e->any_transparent; i++) e->any_transparent = pixels[i * bands + bands - 1] < 128;
    }
    e->attr = liq_attr_create();
    e->grid = malloc(sizeof(int16_t) * GRID_CELLS);
    indices = malloc(e->frame_pixels * frames);
    has_local = calloc(frames, 1);
    if (!e->attr || !e->grid || !indices || !has_local) goto done;
    // Fastest palettes; one index stays free for cgif's frame-to-frame transparency.
    liq_set_speed(e->attr, 10);
    liq_set_max_colors(e->attr, 255);

    const size_t total = e->frame_pixels * frames;
    const int stride = total > HISTOGRAM_PIXELS ? (int)((total + HISTOGRAM_PIXELS - 1) / HISTOGRAM_PIXELS) : 1;
    if (make_palette(e, 0, frames, stride, shared, error) != 0) goto done;
    memset(e->grid, 0xFF, sizeof(int16_t) * GRID_CELLS);
    int local_count = 0;
    for (int f = 0; f < frames; f++) {
        if (map_frame(e, f, shared, indices + e->frame_pixels * f) > LOCAL_PALETTE_ERROR && frames > 1) {
            has_local[f] = 1;
            local_count++;
        }
    }
    if (local_count) {
        // The frames that need a palette of their own are mapped again; the shared colours are refined
        // from the frames that keep them.
        locals = malloc(sizeof(Palette) * frames);
        if (!locals) goto done;
        memset(e->sums, 0, sizeof e->sums);
        for (int f = 0; f < frames; f++) {
            if (has_local[f]) continue;
            map_frame(e, f, shared, indices + e->frame_pixels * f);
        }
        refine(e, shared);
        for (int f = 0; f < frames; f++) {
            if (!has_local[f]) continue;
            if (make_palette(e, f, f + 1, 1, &locals[f], error) != 0) goto done;
            memset(e->grid, 0xFF, sizeof(int16_t) * GRID_CELLS);
            memset(e->sums, 0, sizeof e->sums);
            map_frame(e, f, &locals[f], indices + e->frame_pixels * f);
            refine(e, &locals[f]);
        }
    } else {
        refine(e, shared);
    }

    CGIF_Config config = { 0 };
    config.attrFlags = frames > 1 ? CGIF_ATTR_IS_ANIMATED | (loop == 1 ? CGIF_ATTR_NO_LOOP : 0) : 0;
    // With transparency every frame is drawn whole on a cleared canvas (cgif 0.3 does not clear the
    // first frame for a second one with alpha of its own, so per-frame alpha is not used); opaque
    // animations are written as what changed from the frame before.
    if (e->any_transparent) config.attrFlags |= CGIF_ATTR_HAS_TRANSPARENCY;
    config.numLoops = (uint16_t)(loop > 1 ? (loop - 1 > 65535 ? 65535 : loop - 1) : 0);
    config.width = (uint16_t)width;
    config.height = (uint16_t)height;
    config.pGlobalPalette = shared->rgb;
    config.numGlobalPaletteEntries = (uint16_t)shared->count;
    config.pWriteFn = write_output;
    config.pContext = &out;
    gif = cgif_newgif(&config);
    if (!gif) goto done;
    for (int f = 0; f < frames; f++) {
        CGIF_FrameConfig frame = { 0 };
        frame.pImageData = indices + e->frame_pixels * f;
        const int delay = f < delay_count && delays[f] > 0 ? (delays[f] + 5) / 10 : 0;
        frame.delay = (uint16_t)(delay > 65535 ? 65535 : delay);
        if (!e->any_transparent) frame.genFlags = CGIF_FRAME_GEN_USE_TRANSPARENCY | CGIF_FRAME_GEN_USE_DIFF_WINDOW;
        if (has_local[f]) {
            frame.attrFlags |= CGIF_FRAME_ATTR_USE_LOCAL_TABLE;
            frame.pLocalPalette = locals[f].rgb;
            frame.numLocalPaletteEntries = (uint16_t)locals[f].count;
        }
        if (cgif_addframe(gif, &frame) != CGIF_OK) {
            *error = "a GIF frame could not be written";
            goto done;
        }
    }
    const int closed = cgif_close(gif);
    gif = NULL;
    if (closed != CGIF_OK || out.failed) {
        *error = "the GIF could not be written";
        goto done;
    }
    *output = out.bytes;
    *length = out.length;
    out.bytes = NULL;
    *error = NULL;
    status = 0;

done:
    if (gif) cgif_close(gif);
    free(out.bytes);
    free(indices);
    free(has_local);
    free(locals);
    if (e) {
        if (e->attr) liq_attr_destroy(e->attr);
        free(e->grid);
        free(e);
    }
    free(shared);
    return status;
}

void imagery_gif_free(void *output) {
    free(output);
}
