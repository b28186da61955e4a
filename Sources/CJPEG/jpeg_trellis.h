// The DCT and rate-distortion quantisation behind jpeg_encode.c's coefficient path (not public).
#ifndef IMAGERY_JPEG_TRELLIS_H
#define IMAGERY_JPEG_TRELLIS_H

#include <stdio.h>  // jpeglib.h needs FILE
#include <jpeglib.h>

/// Code lengths of a Huffman table's symbols in bits (0: the symbol has no code), the rate model.
typedef struct {
    unsigned char dc[17];   ///< by DC difference category 0...16
    unsigned char ac[256];  ///< by AC symbol (run << 4 | size)
} imagery_code_lengths;

/// The code lengths of a DC and an AC Huffman table (after jpeg_set_defaults, the standard's example
/// tables of ITU T.81 Annex K.3).
void imagery_code_lengths_of(const JHUFF_TBL *dc, const JHUFF_TBL *ac, imagery_code_lengths *lengths);

/// The forward DCT of an 8 x 8 block of samples (row-major, 0...255), level-shifted, in natural order
/// and scaled as libjpeg's integer DCT scales it (8 x the orthonormal transform).
void imagery_forward_dct(const unsigned char *samples, size_t stride, float coefficients[DCTSIZE2]);

/// Quantises a row of `count` blocks of DCT coefficients (`dct`, as imagery_forward_dct gives them)
/// by `quant` (natural order) into `out`, choosing for each coefficient among the values at most its
/// rounded one (and zero) the one whose squared error plus lambda times its bits costs least (trellis
/// quantisation, as mozjpeg does it): per block for the AC coefficients, which settles the zero runs
/// and where the block ends; along the row for the DC coefficients, whose differences are coded.
/// `last_dc`: the DC value before the row (updated to the last block's). Returns 0, or -1 when memory
/// ran out (nothing written then).
int imagery_trellis_quantise(const float (*dct)[DCTSIZE2], JBLOCKROW out, int count, const UINT16 *quant,
                             const imagery_code_lengths *lengths, int *last_dc);

/// Rounds each coefficient to the nearest multiple of its quantiser, as libjpeg does (the plain path).
void imagery_round_quantise(const float dct[DCTSIZE2], JCOEF *out, const UINT16 *quant);

#endif
