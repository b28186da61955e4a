// Trellis quantisation for jpeg_encode.c: see jpeg_trellis.h.
//
// The idea (as mozjpeg's quantize_trellis, written here anew): rounding each DCT coefficient to the
// nearest multiple of its quantiser minimises the error but not the bytes. A coefficient of 1 after a
// long run of zeros costs a long Huffman code for little picture. For each block, a dynamic programme
// over the coefficients in zigzag order chooses, for each, a value among the candidates at most its
// rounded magnitude (2^k - 1 for each smaller bit length, and the rounded value) or zero, and where
// the block ends (EOB), minimising  bits + lambda x squared error / quantiser^2  with bits from the
// Huffman code lengths (the rate model). lambda grows as the block gets flatter (less energy to hide
// errors in): lambda = 2^15.75 / (2^16.5 + mean AC energy). mozjpeg's numerator is 2^14.75 (tuned by
// its authors on PSNR-HVS and SSIM); twice that, measured on the corpus at 256 px, gives fewer bytes
// at equal quality by both butteraugli and SSIMULACRA2 (BENCHMARKS.md: 2^14.75 was 1.005x and 1.007x
// mozjpeg's bytes, 2^15.25 0.997x and 0.982x, 2^15.75 0.993x and 0.969x, 2^16.25 0.994x and 0.966x).
// The DC coefficients are chosen along the row among the 2 + 60/q nearest values (odd), since each
// costs the bits of its difference from the previous one.

#include "jpeg_trellis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// Natural (row-major) position of each zigzag index.
static const unsigned char zigzag[DCTSIZE2] = {
    0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,
    12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6,  7,  14, 21, 28,
    35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
    58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
};

enum { MAX_MAGNITUDE = (1 << 10) - 1, DC_CANDIDATES_MAX = 9 };  // 8-bit samples: AC values within +-1023

void imagery_code_lengths_of(const JHUFF_TBL *dc, const JHUFF_TBL *ac, imagery_code_lengths *lengths) {
    memset(lengths, 0, sizeof *lengths);
    const JHUFF_TBL *tables[2] = {dc, ac};
    for (int t = 0; t < 2; t++) {
        int k = 0;
        for (int length = 1; length <= 16; length++) {
            for (int i = 0; i < tables[t]->bits[length] && k < 256; i++, k++) {
                int symbol = tables[t]->huffval[k];
                if (t == 0 && symbol <= 16) lengths->dc[symbol] = (unsigned char)length;
                if (t == 1) lengths->ac[symbol] = (unsigned char)length;
            }
        }
    }
}

// One 8-point DCT in place (stride `step`) by Arai, Agui and Nakajima's factorisation: 5
// multiplications where the textbook sum takes 64, each output off by a known factor per frequency
// that imagery_forward_dct divides out (`inverse_aan`). Checked against the textbook sums in the tests.
static void aan_dct(float *d, int step) {
    float tmp0 = d[0] + d[7 * step], tmp7 = d[0] - d[7 * step];
    float tmp1 = d[step] + d[6 * step], tmp6 = d[step] - d[6 * step];
    float tmp2 = d[2 * step] + d[5 * step], tmp5 = d[2 * step] - d[5 * step];
    float tmp3 = d[3 * step] + d[4 * step], tmp4 = d[3 * step] - d[4 * step];
    // Even part.
    float tmp10 = tmp0 + tmp3, tmp13 = tmp0 - tmp3, tmp11 = tmp1 + tmp2, tmp12 = tmp1 - tmp2;
    d[0] = tmp10 + tmp11;
    d[4 * step] = tmp10 - tmp11;
    float z1 = (tmp12 + tmp13) * 0.707106781f;
    d[2 * step] = tmp13 + z1;
    d[6 * step] = tmp13 - z1;
    // Odd part.
    tmp10 = tmp4 + tmp5;
    tmp11 = tmp5 + tmp6;
    tmp12 = tmp6 + tmp7;
    float z5 = (tmp10 - tmp12) * 0.382683433f;
    float z2 = 0.541196100f * tmp10 + z5, z4 = 1.306562965f * tmp12 + z5, z3 = tmp11 * 0.707106781f;
    float z11 = tmp7 + z3, z13 = tmp7 - z3;
    d[5 * step] = z13 + z2;
    d[3 * step] = z13 - z2;
    d[step] = z11 + z4;
    d[7 * step] = z11 - z4;
}

// The AAN output of coefficient (v, u) is libjpeg's scaled coefficient times a[v] x a[u], with
// a[0] = 1 and a[k] = sqrt(2) cos(k pi / 16) (jcdctmgr.c's aanscalefactor): 1 / a[k] here, divided out.
static const float inverse_aan[DCTSIZE] = {
    1.000000000f, 0.720959822f, 0.765366865f, 0.850430095f, 1.000000000f, 1.272758581f, 1.847759065f, 3.624509785f,
};

void imagery_forward_dct(const unsigned char *samples, size_t stride, float coefficients[DCTSIZE2]) {
    for (int y = 0; y < DCTSIZE; y++) {
        for (int x = 0; x < DCTSIZE; x++) coefficients[y * DCTSIZE + x] = (float)samples[y * stride + x] - 128.0f;
        aan_dct(coefficients + y * DCTSIZE, 1);
    }
    for (int u = 0; u < DCTSIZE; u++) aan_dct(coefficients + u, DCTSIZE);
    for (int v = 0; v < DCTSIZE; v++) {
        for (int u = 0; u < DCTSIZE; u++) coefficients[v * DCTSIZE + u] *= inverse_aan[v] * inverse_aan[u];
    }
}

void imagery_round_quantise(const float dct[DCTSIZE2], JCOEF *out, const UINT16 *quant) {
    for (int i = 0; i < DCTSIZE2; i++) {
        float step = 8.0f * quant[i];
        float value = dct[i] / step;
        int rounded = (int)(fabsf(value) + 0.5f);
        if (rounded > MAX_MAGNITUDE + (i == 0 ? 1024 : 0)) rounded = MAX_MAGNITUDE + (i == 0 ? 1024 : 0);
        out[i] = (JCOEF)(value < 0 ? -rounded : rounded);
    }
}

static int bit_length(int value) {  // the bits of |value|: its JPEG size category
    unsigned magnitude = (unsigned)abs(value);
#if defined(__GNUC__) || defined(__clang__)
    return magnitude ? 32 - __builtin_clz(magnitude) : 0;
#else
    int bits = 0;
    for (; magnitude; magnitude >>= 1) bits++;
    return bits;
#endif
}

// The AC coefficients of one block (zigzag 1...63).
static void trellis_block(const float *dct, JCOEF *out, const UINT16 *quant, const imagery_code_lengths *lengths,
                          float lambda) {
    float zero_cost[DCTSIZE2];   // distortion of zeroing coefficients 1...i
    float best[DCTSIZE2];        // least cost of coding 1...i with i the last nonzero so far
    int run_start[DCTSIZE2];     // the previous nonzero index on that best path
    JCOEF chosen[DCTSIZE2];
    int kept[DCTSIZE2];  // the positions a run may start after: 0, and each nonzero chosen so far
    int kept_count = 1;
    kept[0] = 0;
    zero_cost[0] = 0;
    best[0] = 0;
    const int zrl_bits = lengths->ac[0xF0];
    for (int i = 1; i < DCTSIZE2; i++) {
        int z = zigzag[i];
        float step = 8.0f * quant[z];
        float weight = lambda / ((float)quant[z] * quant[z]);
        float magnitude = fabsf(dct[z]);
        zero_cost[i] = zero_cost[i - 1] + magnitude * magnitude * weight;
        int rounded = (int)(magnitude / step + 0.5f);
        chosen[i] = 0;
        best[i] = 1e30f;
        if (rounded == 0) continue;
        if (rounded > MAX_MAGNITUDE) rounded = MAX_MAGNITUDE;
        int candidates = bit_length(rounded);
        // j: the previous nonzero coefficient (0: none yet), among the last 8 kept and the start. Going
        // further back (zeroing 8 or more kept coefficients at once) changed no ratio of the corpus at
        // 256 px; not going there saves a fifth of the instructions.
        int window = kept_count > 8 ? kept_count - 8 : 0;
        for (int n = window > 0 ? -1 : 0; n < kept_count; n = n < 0 ? window : n + 1) {
            int j = n < 0 ? 0 : kept[n];
            int run = i - 1 - j;
            if (run >= 16 && zrl_bits == 0) continue;
            float run_bits = (float)((run >> 4) * zrl_bits);
            float before = best[j] + zero_cost[i - 1] - zero_cost[j];
            for (int k = 0; k < candidates; k++) {
                int value = k < candidates - 1 ? (2 << k) - 1 : rounded;
                int size = k + 1;
                int code = lengths->ac[(run & 15) << 4 | size];
                if (code == 0) continue;
                float error = value * step - magnitude;
                float cost = before + run_bits + code + size + error * error * weight;
                if (cost < best[i]) {
                    best[i] = cost;
                    chosen[i] = (JCOEF)(dct[z] < 0 ? -value : value);
                    run_start[i] = j;
                }
            }
        }
        if (chosen[i] != 0) kept[kept_count++] = i;
    }
    // Where the block ends: after the last coefficient kept, with an EOB unless it is the 63rd.
    int last = 0;
    float least = zero_cost[DCTSIZE2 - 1] + lengths->ac[0x00];
    for (int i = 1; i < DCTSIZE2; i++) {
        if (chosen[i] == 0) continue;
        float cost = best[i] + zero_cost[DCTSIZE2 - 1] - zero_cost[i] + (i < DCTSIZE2 - 1 ? lengths->ac[0x00] : 0);
        if (cost < least) {
            least = cost;
            last = i;
        }
    }
    for (int i = 1; i < DCTSIZE2; i++) out[zigzag[i]] = 0;
    for (int i = last; i > 0; i = run_start[i]) out[zigzag[i]] = chosen[i];
}

int imagery_trellis_quantise(const float (*dct)[DCTSIZE2], JBLOCKROW out, int count, const UINT16 *quant,
                             const imagery_code_lengths *lengths, int *last_dc) {
    if (count <= 0) return 0;
    int candidates = (2 + 60 / quant[0]) | 1;  // odd: as many above the rounded value as below
    if (candidates > DC_CANDIDATES_MAX) candidates = DC_CANDIDATES_MAX;
    float *cost = malloc(sizeof(float) * (size_t)count * candidates);
    int *from = malloc(sizeof(int) * (size_t)count * candidates);
    int *value = malloc(sizeof(int) * (size_t)count * candidates);
    if (!cost || !from || !value) {
        free(cost);
        free(from);
        free(value);
        return -1;
    }
    const float dc_step = 8.0f * quant[0];
    for (int b = 0; b < count; b++) {
        float energy = 0;
        for (int i = 1; i < DCTSIZE2; i++) energy += dct[b][i] * dct[b][i];
        float lambda = 55109.0f / (92681.9f + energy / 63.0f);  // 2^15.75 / (2^16.5 + mean AC energy)
        trellis_block(dct[b], out[b], quant, lengths, lambda);
        // DC: candidates around the rounded value; cost of each through the best predecessor.
        float dc_weight = lambda / ((float)quant[0] * quant[0]);
        int rounded = (int)lroundf(dct[b][0] / dc_step);
        for (int k = 0; k < candidates; k++) {
            int v = rounded - candidates / 2 + k;
            if (v > 2047) v = 2047;
            if (v < -2047) v = -2047;
            float error = v * dc_step - dct[b][0];
            float distortion = error * error * dc_weight;
            size_t at = (size_t)b * candidates + k;
            value[at] = v;
            if (b == 0) {
                int size = bit_length(v - *last_dc);
                cost[at] = distortion + size + lengths->dc[size];
                from[at] = -1;
            } else {
                cost[at] = 1e30f;
                for (int l = 0; l < candidates; l++) {
                    size_t previous = (size_t)(b - 1) * candidates + l;
                    int size = bit_length(v - value[previous]);
                    float total = cost[previous] + distortion + size + lengths->dc[size];
                    if (total < cost[at]) {
                        cost[at] = total;
                        from[at] = l;
                    }
                }
            }
        }
    }
    int k = 0;
    for (int l = 1; l < candidates; l++) {
        if (cost[(size_t)(count - 1) * candidates + l] < cost[(size_t)(count - 1) * candidates + k]) k = l;
    }
    *last_dc = value[(size_t)(count - 1) * candidates + k];
    for (int b = count - 1; b >= 0; b--) {
        out[b][0] = (JCOEF)value[(size_t)b * candidates + k];
        k = from[(size_t)b * candidates + k];
    }
    free(cost);
    free(from);
    free(value);
    return 0;
}
