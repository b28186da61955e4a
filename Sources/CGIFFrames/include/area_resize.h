#ifndef IMAGERY_AREA_RESIZE_H
#define IMAGERY_AREA_RESIZE_H

#include <stddef.h>
#include <stdint.h>

/// Shrinks `source` (`source_width` x `source_height`, `bands` 8-bit channels interleaved, rows
/// `source_stride` bytes apart) to
/// `width` x `height` (each no larger than the source's) by area averaging: every output pixel is the
/// mean of the source area it covers, fractional pixels weighted by how much of them it covers (as
/// gifsicle's default resize, "mix"). Premultiplied input gives premultiplied output.
/// Returns 0; -1 when a size is out of range; -2 when memory runs out (nothing is written).
int imagery_area_resize(const uint8_t *source, int source_width, int source_height, size_t source_stride, int bands,
                        uint8_t *output, int width, int height);

#endif
