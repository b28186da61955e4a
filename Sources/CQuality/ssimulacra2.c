// SSIMULACRA2: see include/ssimulacra2.h.
//
// The metric: both images to linear light, then to XYB (the opsin absorbance model of JPEG XL, made
// positive), and at 6 scales (halving each time, in linear light): per channel, SSIM's error map
// 1 - (1 - (mu1 - mu2)^2)(2 sigma12 + C2)/(sigma1^2 + sigma2^2 + C2) (no luminance-ratio term: XYB is
// perceptually uniform enough), and edge maps from |img - mu|: where the distorted image has edges
// the reference does not (ringing, blocking) and where it lost them (blur). Each map's mean and
// 4-norm, 108 numbers, are weighted (Cloudinary's fitted weights: facts), and the sum mapped to a
// 0-100 score by a fitted polynomial and power. Gaussian blur sigma 1.5 (radius 5): separable, the
// rows mirrored at the sides and zero above and below, as the Python port on PyPI blurs.
//
// A prepared reference (imagery_ssimulacra2_prepare) keeps what depends on the reference alone (its
// XYB pyramid, blurred means and squares), so that each distorted image compared with it costs three
// blurs per map instead of five; its fast mode measures only the maps with a weight of 0.01 or more.

#include "include/ssimulacra2.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { SCALES = 6, RADIUS = 5 };

static const double weights[108] = {
    0.0, 0.0007376606707406586, 0.0, 0.0, 0.0007793481682867309, 0.0, 0.0, 0.0004371155730107379, 0.0,
    1.1041726426657346, 0.00066284834129271, 0.00015231632783718752, 0.0, 0.0016406437456599754, 0.0,
    1.8422455520539298, 11.441172603757666, 0.0, 0.0007989109436015163, 0.000176816438078653, 0.0,
    1.8787594979546387, 10.94906990605142, 0.0, 0.0007289346991508072, 0.9677937080626833, 0.0,
    0.00014003424285435884, 0.9981766977854967, 0.00031949755934435053, 0.0004550992113792063, 0.0, 0.0,
    0.0013648766163243398, 0.0, 0.0, 0.0, 0.0, 0.0, 7.466890328078848, 0.0, 17.445833984131262,
    0.0006235601634041466, 0.0, 0.0, 6.683678146179332, 0.00037724407979611296, 1.027889937768264,
    225.20515300849274, 0.0, 0.0, 19.213238186143016, 0.0011401524586618361, 0.001237755635509985,
    176.39317598450694, 0.0, 0.0, 24.43300999870476, 0.28520802612117757, 0.0004485436923833408, 0.0, 0.0,
    0.0, 34.77906344483772, 44.835625328877896, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0008680556573291698, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0005313191874358747, 0.0, 0.00016533814161379112,
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0004179171803251336, 0.0017290828234722833, 0.0, 0.0020827005846636437,
    0.0, 0.0, 8.826982764996862, 23.19243343998926, 0.0, 95.1080498811086, 0.9863978034400682,
    0.9834382792465353, 0.0012286405048278493, 171.2667255897307, 0.9807858872435379, 0.0, 0.0, 0.0,
    0.0005130064588990679, 0.0, 0.00010854057858411537,
};

// Opsin absorbance (JPEG XL's opsin_params.h): rows mix linear R, G, B; the bias keeps the cube root
// away from zero.
static const double opsin[3][3] = {
    {0.30, 1.0 - 0.078 - 0.30, 0.078},
    {0.23, 1.0 - 0.078 - 0.23, 0.078},
    {0.24342268924547819, 0.20476744424496821, 1.0 - 0.24342268924547819 - 0.20476744424496821},
};
static const double opsin_bias = 0.0037930732552754493;

typedef struct {
    int width, height;
    float *plane[3];
} planes;

static int planes_alloc(planes *p, int width, int height) {
    p->width = width;
    p->height = height;
    size_t count = (size_t)width * height;
    for (int c = 0; c < 3; c++) p->plane[c] = malloc(count * sizeof(float));
    return p->plane[0] && p->plane[1] && p->plane[2];
}

static void planes_free(planes *p) {
    for (int c = 0; c < 3; c++) {
        free(p->plane[c]);
        p->plane[c] = NULL;
    }
}

static void to_linear(const unsigned char *pixels, int components, size_t stride, planes *out) {
    float table[256];
    for (int v = 0; v < 256; v++) {
        double x = v / 255.0;
        table[v] = (float)(x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4));
    }
    for (int y = 0; y < out->height; y++) {
        const unsigned char *row = pixels + (size_t)y * stride;
        for (int x = 0; x < out->width; x++) {
            size_t at = (size_t)y * out->width + x;
            for (int c = 0; c < 3; c++) out->plane[c][at] = table[row[x * components + (components == 3 ? c : 0)]];
        }
    }
}

// The cube root of x > 0 to float precision: a first guess from the exponent's bits (within about
// 3 %), then three Newton steps (each squares the error). libm's cbrt took half of a comparison's
// time; this one, branch-free, is vectorised with the loops around it.
static inline float cube_root(float x) {
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    bits = bits / 3 + 0x2A514067u;
    float y;
    memcpy(&y, &bits, sizeof y);
    for (int step = 0; step < 3; step++) y = (2.0f * y + x / (y * y)) * (1.0f / 3.0f);
    return y;
}

// Linear RGB to XYB, made positive as the metric wants it (X x 14 + 0.42, Y + 0.01, B - Y + 0.55).
// Without `blue`, B is left as it was (its cube root is the costly part, and X and Y do not need it).
static void to_xyb(const planes *linear, planes *out, int blue) {
    const float bias = (float)opsin_bias, bias_root = cube_root(bias);
    const float m[3][3] = {
        {(float)opsin[0][0], (float)opsin[0][1], (float)opsin[0][2]},
        {(float)opsin[1][0], (float)opsin[1][1], (float)opsin[1][2]},
        {(float)opsin[2][0], (float)opsin[2][1], (float)opsin[2][2]},
    };
    size_t count = (size_t)linear->width * linear->height;
    const float *restrict r = linear->plane[0], *restrict g = linear->plane[1], *restrict b = linear->plane[2];
    float *restrict x = out->plane[0], *restrict y = out->plane[1], *restrict z = out->plane[2];
    for (size_t i = 0; i < count; i++) {
        float l = cube_root(m[0][0] * r[i] + m[0][1] * g[i] + m[0][2] * b[i] + bias) - bias_root;
        float n = cube_root(m[1][0] * r[i] + m[1][1] * g[i] + m[1][2] * b[i] + bias) - bias_root;
        x[i] = 0.5f * (l - n) * 14.0f + 0.42f;
        y[i] = 0.5f * (l + n) + 0.01f;
    }
    if (!blue) return;
    for (size_t i = 0; i < count; i++) {
        float s = cube_root(m[2][0] * r[i] + m[2][1] * g[i] + m[2][2] * b[i] + bias) - bias_root;
        z[i] = s - (y[i] - 0.01f) + 0.55f;
    }
}

// 2 x 2 means; a last odd row or column is averaged over the pixels it has.
static void downsample(const planes *in, planes *out) {
    for (int c = 0; c < 3; c++) {
        for (int y = 0; y < out->height; y++) {
            for (int x = 0; x < out->width; x++) {
                double sum = 0;
                int n = 0;
                for (int dy = 0; dy < 2 && 2 * y + dy < in->height; dy++) {
                    for (int dx = 0; dx < 2 && 2 * x + dx < in->width; dx++) {
                        sum += in->plane[c][(size_t)(2 * y + dy) * in->width + 2 * x + dx];
                        n++;
                    }
                }
                out->plane[c][(size_t)y * out->width + x] = (float)(sum / n);
            }
        }
    }
}

static int mirror(int x, int size) {  // half-sample symmetric: ... b a | a b c ... c b a | a b ...
    while (x < 0 || x >= size) x = x < 0 ? -x - 1 : 2 * size - x - 1;
    return x;
}

// Gaussian blur of one plane (sigma 1.5); `scratch` holds width x height floats. Each output is the
// taps summed in the same order whatever the loop order, so the interior's fast loops give the same
// floats as the border's mirrored ones would.
static void blur(const float *in, float *out, float *scratch, int width, int height, const float *kernel) {
    int inner_end = width - RADIUS > RADIUS ? width - RADIUS : RADIUS;  // [RADIUS, inner_end): no mirroring
    for (int y = 0; y < height; y++) {
        const float *restrict row = in + (size_t)y * width;
        float *restrict target = scratch + (size_t)y * width;
        for (int x = RADIUS; x < inner_end; x++) target[x] = 0;
        for (int k = -RADIUS; k <= RADIUS; k++) {  // tap by tap over the row: vectorised
            float weight = kernel[k + RADIUS];
            for (int x = RADIUS; x < inner_end; x++) target[x] += weight * row[x + k];
        }
        for (int x = 0; x < width; x++) {
            if (x >= RADIUS && x < inner_end) continue;
            float sum = 0;
            for (int k = -RADIUS; k <= RADIUS; k++) sum += kernel[k + RADIUS] * row[mirror(x + k, width)];
            target[x] = sum;
        }
    }
    for (int y = 0; y < height; y++) {
        float *target = out + (size_t)y * width;
        for (int x = 0; x < width; x++) target[x] = 0;
        for (int k = -RADIUS; k <= RADIUS; k++) {
            int yy = y + k;
            if (yy < 0 || yy >= height) continue;
            const float *source = scratch + (size_t)yy * width;
            float weight = kernel[k + RADIUS];
            for (int x = 0; x < width; x++) target[x] += weight * source[x];
        }
    }
}

// What the reference contributes, per scale: its XYB planes, their blurred means and blurred squares
// (only for the channels measured there).
typedef struct {
    int width, height;
    float *xyb[3], *mu[3], *square[3];
} level;

struct imagery_ssimulacra2_reference {
    int width, height, components, scales;
    int measured[SCALES][3];  // whether channel c is measured at scale s
    float kernel[2 * RADIUS + 1];
    level levels[SCALES];
};

// Scales measured for a width x height image: halving until a side would go under 8.
static int scale_count(int width, int height) {
    int scales = 1;
    while (scales < SCALES) {
        width = (width + 1) / 2;
        height = (height + 1) / 2;
        if (width < 8 || height < 8) break;
        scales++;
    }
    return scales;
}

// The weight of (channel, scale, norm, map) when `scales` scales are measured: the weights run over
// channels, then the scales measured, then the norms (so fewer scales shift them, as the reference
// implementation does); maps: SSIM, artifact, lost detail.
static double weight(int scales, int c, int s, int norm, int map) {
    return weights[c * scales * 6 + s * 6 + norm * 3 + map];
}

void imagery_ssimulacra2_release(imagery_ssimulacra2_reference *reference) {
    if (!reference) return;
    for (int s = 0; s < SCALES; s++) {
        for (int c = 0; c < 3; c++) {
            free(reference->levels[s].xyb[c]);
            free(reference->levels[s].mu[c]);
            free(reference->levels[s].square[c]);
        }
    }
    free(reference);
}

// Halves `p` in place, in linear light (each output pixel reads later ones only).
static void halve(planes *p) {
    planes half = *p;
    half.width = (p->width + 1) / 2;
    half.height = (p->height + 1) / 2;
    downsample(p, &half);
    *p = half;
}

imagery_ssimulacra2_reference *imagery_ssimulacra2_prepare(const unsigned char *pixels, int width, int height, int components,
                                                          size_t stride, int fast) {
    if (!pixels || width <= 0 || height <= 0 || (components != 1 && components != 3)
        || stride < (size_t)width * components || (size_t)width * height > ((size_t)1 << 28)) {
        return NULL;
    }
    imagery_ssimulacra2_reference *reference = calloc(1, sizeof *reference);
    if (!reference) return NULL;
    reference->width = width;
    reference->height = height;
    reference->components = components;
    reference->scales = scale_count(width, height);
    double kernel_sum = 0;
    for (int k = -RADIUS; k <= RADIUS; k++) kernel_sum += reference->kernel[k + RADIUS] = (float)exp(-k * k / (2 * 1.5 * 1.5));
    for (int k = 0; k <= 2 * RADIUS; k++) reference->kernel[k] = (float)(reference->kernel[k] / kernel_sum);
    int last = 0;  // the last scale measured at all
    for (int s = 0; s < reference->scales; s++) {
        for (int c = 0; c < 3; c++) {
            int measured = !fast;
            for (int j = 0; j < 6 && !measured; j++) measured = weight(reference->scales, c, s, j / 3, j % 3) >= 0.01;
            reference->measured[s][c] = measured;
            if (measured) last = s;
        }
    }
    reference->scales = last + 1;  // a scale no channel is measured at costs nothing and adds nothing

    planes linear = {0}, xyb = {0};
    float *product = NULL, *scratch = NULL;
    size_t count = (size_t)width * height;
    int ok = planes_alloc(&linear, width, height) && planes_alloc(&xyb, width, height)
        && (product = malloc(count * sizeof(float))) && (scratch = malloc(count * sizeof(float)));
    if (ok) to_linear(pixels, components, stride, &linear);
    for (int s = 0; s < reference->scales && ok; s++) {
        int w = linear.width, h = linear.height;
        size_t n = (size_t)w * h;
        xyb.width = w;
        xyb.height = h;
        to_xyb(&linear, &xyb, reference->measured[s][2]);
        level *l = &reference->levels[s];
        l->width = w;
        l->height = h;
        for (int c = 0; c < 3 && ok; c++) {
            if (!reference->measured[s][c]) continue;
            ok = (l->xyb[c] = malloc(n * sizeof(float))) && (l->mu[c] = malloc(n * sizeof(float)))
                && (l->square[c] = malloc(n * sizeof(float)));
            if (!ok) break;
            const float *a = xyb.plane[c];
            memcpy(l->xyb[c], a, n * sizeof(float));
            for (size_t i = 0; i < n; i++) product[i] = a[i] * a[i];
            blur(product, l->square[c], scratch, w, h, reference->kernel);
            blur(a, l->mu[c], scratch, w, h, reference->kernel);
        }
        if (s + 1 < reference->scales) halve(&linear);
    }
    planes_free(&linear);
    planes_free(&xyb);
    free(product);
    free(scratch);
    if (!ok) {
        imagery_ssimulacra2_release(reference);
        return NULL;
    }
    return reference;
}

double imagery_ssimulacra2_compare(const imagery_ssimulacra2_reference *reference, const unsigned char *distorted,
                                   size_t stride) {
    if (!reference || !distorted || stride < (size_t)reference->width * reference->components) return NAN;
    int width = reference->width, height = reference->height, scales = scale_count(width, height);
    planes linear = {0}, xyb = {0};
    float *work[5] = {0};  // product, mu2, sigma22, sigma12, scratch
    double ssim[SCALES][6] = {{0}}, edge[SCALES][12] = {{0}};
    double score = NAN;
    size_t count = (size_t)width * height;
    int ok = planes_alloc(&linear, width, height) && planes_alloc(&xyb, width, height);
    for (int i = 0; i < 5 && ok; i++) ok = (work[i] = malloc(count * sizeof(float))) != NULL;
    if (!ok) goto done;
    to_linear(distorted, reference->components, stride, &linear);

    for (int s = 0; s < reference->scales; s++) {
        const level *l = &reference->levels[s];
        int w = l->width, h = l->height;
        size_t n = (size_t)w * h;
        xyb.width = w;
        xyb.height = h;
        to_xyb(&linear, &xyb, reference->measured[s][2]);
        for (int c = 0; c < 3; c++) {
            if (!reference->measured[s][c]) continue;
            const float *a = l->xyb[c], *b = xyb.plane[c], *mu1 = l->mu[c], *s11 = l->square[c];
            float *product = work[0], *mu2 = work[1], *s22 = work[2], *s12 = work[3];
            for (size_t i = 0; i < n; i++) product[i] = b[i] * b[i];
            blur(product, s22, work[4], w, h, reference->kernel);
            for (size_t i = 0; i < n; i++) product[i] = a[i] * b[i];
            blur(product, s12, work[4], w, h, reference->kernel);
            blur(b, mu2, work[4], w, h, reference->kernel);
            double sums[6] = {0};  // ssim: mean, 4th powers; artifact: mean, 4th; lost detail: mean, 4th
            for (size_t i = 0; i < n; i++) {
                double m1 = mu1[i], m2 = mu2[i];
                double num_m = 1.0 - (m1 - m2) * (m1 - m2);
                double num_s = 2.0 * (s12[i] - m1 * m2) + 0.0009;
                double denom_s = (s11[i] - m1 * m1) + (s22[i] - m2 * m2) + 0.0009;
                double d = 1.0 - num_m * num_s / denom_s;
                if (d < 0) d = 0;
                sums[0] += d;
                sums[1] += d * d * d * d;
                double ratio = (1.0 + fabs(b[i] - m2)) / (1.0 + fabs(a[i] - m1)) - 1.0;
                double artifact = ratio > 0 ? ratio : 0, lost = ratio < 0 ? -ratio : 0;
                sums[2] += artifact;
                sums[3] += artifact * artifact * artifact * artifact;
                sums[4] += lost;
                sums[5] += lost * lost * lost * lost;
            }
            ssim[s][c * 2] = sums[0] / n;
            ssim[s][c * 2 + 1] = pow(sums[1] / n, 0.25);
            edge[s][c * 4] = sums[2] / n;
            edge[s][c * 4 + 1] = pow(sums[3] / n, 0.25);
            edge[s][c * 4 + 2] = sums[4] / n;
            edge[s][c * 4 + 3] = pow(sums[5] / n, 0.25);
        }
        if (s + 1 < reference->scales) halve(&linear);
    }
    // Maps not measured count as 0 (their weights are under 0.01 in the fast mode).
    double sum = 0;
    for (int c = 0; c < 3; c++) {
        for (int s = 0; s < scales; s++) {
            for (int norm = 0; norm < 2; norm++) {
                sum += weight(scales, c, s, norm, 0) * fabs(ssim[s][c * 2 + norm]);
                sum += weight(scales, c, s, norm, 1) * fabs(edge[s][c * 4 + norm]);
                sum += weight(scales, c, s, norm, 2) * fabs(edge[s][c * 4 + norm + 2]);
            }
        }
    }
    sum *= 0.9562382616834844;
    sum = 2.326765642916932 * sum - 0.020884521182843837 * sum * sum + 6.248496625763138e-05 * sum * sum * sum;
    score = sum > 0 ? 100.0 - 10.0 * pow(sum, 0.6276336467831387) : 100.0;

done:
    planes_free(&linear);
    planes_free(&xyb);
    for (int k = 0; k < 5; k++) free(work[k]);
    return score;
}

double imagery_ssimulacra2(const unsigned char *reference, const unsigned char *distorted, int width, int height,
                           int components, size_t stride) {
    imagery_ssimulacra2_reference *prepared = imagery_ssimulacra2_prepare(reference, width, height, components, stride, 0);
    if (!prepared) return NAN;
    double score = imagery_ssimulacra2_compare(prepared, distorted, stride);
    imagery_ssimulacra2_release(prepared);
    return score;
}
