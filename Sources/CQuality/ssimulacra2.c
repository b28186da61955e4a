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

#include "include/ssimulacra2.h"

#include <math.h>
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

// Linear RGB to XYB, made positive as the metric wants it (X x 14 + 0.42, Y + 0.01, B - Y + 0.55).
static void to_xyb(const planes *linear, planes *out) {
    const double bias_root = cbrt(opsin_bias);
    size_t count = (size_t)linear->width * linear->height;
    for (size_t i = 0; i < count; i++) {
        double rgb[3] = {linear->plane[0][i], linear->plane[1][i], linear->plane[2][i]}, mixed[3];
        for (int k = 0; k < 3; k++) {
            double m = opsin[k][0] * rgb[0] + opsin[k][1] * rgb[1] + opsin[k][2] * rgb[2] + opsin_bias;
            mixed[k] = cbrt(m > 0 ? m : 0) - bias_root;
        }
        double x = 0.5 * (mixed[0] - mixed[1]), y = 0.5 * (mixed[0] + mixed[1]), b = mixed[2];
        out->plane[0][i] = (float)(x * 14.0 + 0.42);
        out->plane[1][i] = (float)(y + 0.01);
        out->plane[2][i] = (float)(b - y + 0.55);
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

// Gaussian blur of one plane (sigma 1.5); `scratch` holds width x height floats.
static void blur(const float *in, float *out, float *scratch, int width, int height, const float *kernel) {
    for (int y = 0; y < height; y++) {
        const float *row = in + (size_t)y * width;
        for (int x = 0; x < width; x++) {
            float sum = 0;
            for (int k = -RADIUS; k <= RADIUS; k++) sum += kernel[k + RADIUS] * row[mirror(x + k, width)];
            scratch[(size_t)y * width + x] = sum;
        }
    }
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            float sum = 0;
            for (int k = -RADIUS; k <= RADIUS; k++) {
                int yy = y + k;
                if (yy >= 0 && yy < height) sum += kernel[k + RADIUS] * scratch[(size_t)yy * width + x];
            }
            out[(size_t)y * width + x] = sum;
        }
    }
}

double imagery_ssimulacra2(const unsigned char *reference, const unsigned char *distorted, int width, int height,
                           int components, size_t stride) {
    if (!reference || !distorted || width <= 0 || height <= 0 || (components != 1 && components != 3)
        || stride < (size_t)width * components || (size_t)width * height > ((size_t)1 << 28)) {
        return NAN;
    }
    float kernel[2 * RADIUS + 1];
    double kernel_sum = 0;
    for (int k = -RADIUS; k <= RADIUS; k++) kernel_sum += kernel[k + RADIUS] = (float)exp(-k * k / (2 * 1.5 * 1.5));
    for (int k = 0; k <= 2 * RADIUS; k++) kernel[k] = (float)(kernel[k] / kernel_sum);

    planes linear[2] = {{0}}, xyb[2] = {{0}};
    float *work[7] = {0};  // product, mu1, mu2, sigma11, sigma22, sigma12, scratch
    double ssim[SCALES][6] = {{0}}, edge[SCALES][12] = {{0}};
    int scales = 0;
    double score = NAN;
    size_t count = (size_t)width * height;
    int ok = planes_alloc(&linear[0], width, height) && planes_alloc(&linear[1], width, height)
        && planes_alloc(&xyb[0], width, height) && planes_alloc(&xyb[1], width, height);
    for (int i = 0; i < 7 && ok; i++) ok = (work[i] = malloc(count * sizeof(float))) != NULL;
    if (!ok) goto done;
    to_linear(reference, components, stride, &linear[0]);
    to_linear(distorted, components, stride, &linear[1]);

    for (int s = 0; s < SCALES; s++) {
        int w = linear[0].width, h = linear[0].height;
        if (s > 0 && (w < 8 || h < 8)) break;
        xyb[0].width = xyb[1].width = w;
        xyb[0].height = xyb[1].height = h;
        to_xyb(&linear[0], &xyb[0]);
        to_xyb(&linear[1], &xyb[1]);
        size_t n = (size_t)w * h;
        for (int c = 0; c < 3; c++) {
            const float *a = xyb[0].plane[c], *b = xyb[1].plane[c];
            float *product = work[0], *mu1 = work[1], *mu2 = work[2], *s11 = work[3], *s22 = work[4], *s12 = work[5];
            for (size_t i = 0; i < n; i++) product[i] = a[i] * a[i];
            blur(product, s11, work[6], w, h, kernel);
            for (size_t i = 0; i < n; i++) product[i] = b[i] * b[i];
            blur(product, s22, work[6], w, h, kernel);
            for (size_t i = 0; i < n; i++) product[i] = a[i] * b[i];
            blur(product, s12, work[6], w, h, kernel);
            blur(a, mu1, work[6], w, h, kernel);
            blur(b, mu2, work[6], w, h, kernel);
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
        scales++;
        if (s + 1 < SCALES) {  // halve, in linear light (in place: each output pixel reads later ones only)
            planes half[2];
            for (int k = 0; k < 2; k++) {
                half[k] = linear[k];
                half[k].width = (w + 1) / 2;
                half[k].height = (h + 1) / 2;
                downsample(&linear[k], &half[k]);
                linear[k] = half[k];
            }
        }
    }
    // The weights run over channels, then the scales measured, then the norms (so fewer scales shift
    // them: as the reference implementation does).
    double sum = 0;
    int i = 0;
    for (int c = 0; c < 3; c++) {
        for (int s = 0; s < scales; s++) {
            for (int norm = 0; norm < 2; norm++) {
                sum += weights[i++] * fabs(ssim[s][c * 2 + norm]);
                sum += weights[i++] * fabs(edge[s][c * 4 + norm]);
                sum += weights[i++] * fabs(edge[s][c * 4 + norm + 2]);
            }
        }
    }
    sum *= 0.9562382616834844;
    sum = 2.326765642916932 * sum - 0.020884521182843837 * sum * sum + 6.248496625763138e-05 * sum * sum * sum;
    score = sum > 0 ? 100.0 - 10.0 * pow(sum, 0.6276336467831387) : 100.0;

done:
    for (int k = 0; k < 2; k++) {
        planes_free(&linear[k]);
        planes_free(&xyb[k]);
    }
    for (int k = 0; k < 7; k++) free(work[k]);
    return score;
}
