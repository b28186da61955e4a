#ifndef IMAGERY_GIF_ENCODER_H
#define IMAGERY_GIF_ENCODER_H

#include <stddef.h>
#include <stdint.h>

/// Writes frames as one GIF with a single palette for all of them (libimagequant's palette from a
/// histogram of every frame, each colour then moved to the mean of the pixels it stands for; pixels
/// mapped to their nearest colour without dithering; LZW and frame-to-frame optimisation by cgif).
///
/// `pixels`: `frames` frames of `width` x `height`, 8 bits a channel, `bands` 1 (grey), 2 (grey, alpha),
/// 3 (RGB) or 4 (RGBA), frames one after another. Alpha under 128 is transparent, as in libvips.
/// `delays`: `delay_count` frame times in milliseconds (missing ones: 0). `loop`: how many times the
/// animation plays, 0 for ever (libvips' "loop"). A single frame makes a still GIF.
/// On success returns 0 and sets `*output` (free it with `imagery_gif_free`) and `*length`; on failure
/// returns -1 and sets `*error` to a static message.
int imagery_gif_encode(const uint8_t *pixels, int width, int height, int bands, int frames,
                       const int *delays, int delay_count, int loop,
                       uint8_t **output, size_t *length, const char **error);

void imagery_gif_free(void *output);

#endif
