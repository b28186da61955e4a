#include "area_resize.h"

#include <math.h>
#include <stdlib.h>

/// The source pixels one output pixel covers along an axis, and each one's share of it.
typedef struct {
    int first, count;
    float *weights;
} Span;

/// Spans for shrinking `source` pixels to `output`, their weights in `weights` (sized by the caller).
static void make_spans(int source, int output, Span *spans, float *weights) {
    const double scale = (double)source / output;
    for (int x = 0; x < output; x++) {
        const double start = x * scale, end = (x + 1) * scale;
        const int first = (int)floor(start);
        int last = (int)ceil(end);
        if (last > source) last = source;
        spans[x].first = first;
        spans[x].count = last - first;
        spans[x].weights = weights;
        for (int i = first; i < last; i++) {
            const double low = i > start ? i : start, high = i + 1 < end ? i + 1 : end;
            *weights++ = (float)((high - low) / scale);
        }
    }
}

int imagery_area_resize(const uint8_t *source, int source_width, int source_height, size_t source_stride, int bands,
                        uint8_t *output, int width, int height) {
    if (width < 1 || height < 1 || width > source_width || height > source_height || bands < 1 || bands > 4) return -1;
    // The largest buffer below, counted without overflowing: more than memory can hold is out of memory.
    if ((size_t)width * bands > SIZE_MAX / sizeof(float) / (size_t)source_height) return -2;
    // At most ceil(scale) + 1 source pixels per output pixel.
    const int horizontal_taps = source_width / width + 2, vertical_taps = source_height / height + 2;
    Span *columns = malloc(sizeof(Span) * width), *rows = malloc(sizeof(Span) * height);
    float *column_weights = malloc(sizeof(float) * (size_t)width * horizontal_taps);
    float *row_weights = malloc(sizeof(float) * (size_t)height * vertical_taps);
    // The source's rows shrunk horizontally, then the columns of that, one output row at a time.
    float *narrow = malloc(sizeof(float) * (size_t)width * bands * source_height);
    float *sum = malloc(sizeof(float) * (size_t)width * bands);
    int status = -2;  // memory ran out
    if (!columns || !rows || !column_weights || !row_weights || !narrow || !sum) goto done;
    make_spans(source_width, width, columns, column_weights);
    make_spans(source_height, height, rows, row_weights);
    const int line = width * bands;
    for (int y = 0; y < source_height; y++) {
        const uint8_t *row = source + (size_t)y * source_stride;
        float *out = narrow + (size_t)y * line;
        for (int x = 0; x < width; x++) {
            float acc[4] = { 0, 0, 0, 0 };
            const uint8_t *p = row + (size_t)columns[x].first * bands;
            for (int k = 0; k < columns[x].count; k++, p += bands) {
                const float w = columns[x].weights[k];
                for (int c = 0; c < bands; c++) acc[c] += w * p[c];
            }
            for (int c = 0; c < bands; c++) out[x * bands + c] = acc[c];
        }
    }
    for (int y = 0; y < height; y++) {
        for (int i = 0; i < line; i++) sum[i] = 0;
        for (int k = 0; k < rows[y].count; k++) {
            const float w = rows[y].weights[k];
            const float *in = narrow + (size_t)(rows[y].first + k) * line;
            for (int i = 0; i < line; i++) sum[i] += w * in[i];
        }
        uint8_t *out = output + (size_t)y * line;
        for (int i = 0; i < line; i++) {
            const float v = sum[i] + 0.5f;
            out[i] = v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)v;
        }
    }
    status = 0;
done:
    free(sum);
    free(narrow);
    free(row_weights);
    free(column_weights);
    free(rows);
    free(columns);
    return status;
}
