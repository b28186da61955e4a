// The decode-only limit: how many JPEGs per second N threads can decode at the DCT scale a
// 256-pixel-wide thumbnail needs, with nothing else going on (no HTTP, no resize, no encode).
//
// Build (from this directory, one line):
//   gcc -O2 -pthread decode_limit.c ../../Sources/CJPEG/jpeg_scaled.c -o /tmp/decode_limit $(pkg-config --cflags --libs vips) -ljpeg
// Run:
//   /tmp/decode_limit -t 2 -d 10 /work/shared/corpus/*.jpg            imagery_jpeg_decode_scaled
//   /tmp/decode_limit -t 2 -d 10 -m vips /work/shared/corpus/*.jpg    vips_jpegload_buffer (libvips' decode)
//   /tmp/decode_limit -t 2 -d 10 -m full /work/shared/corpus/*.jpg    libjpeg alone, every scan decoded
// Options: -t threads (default 1), -d seconds (default 5), -m jpeg|vips|full, -s (strict: warnings are
// errors), -M (keep freed memory in glibc's malloc heap: M_ARENA_MAX 1, M_MMAP_THRESHOLD 32 MiB,
// M_TRIM_THRESHOLD 1 GiB, so that libjpeg's big whole-image coefficient buffer for progressive
// files is not fresh, kernel-zeroed pages every time; GLIBC_TUNABLES can do the same to any process).
//
// Each file is read into memory once. Its scale is the coarsest of 1/2, 1/4, 1/8 that keeps the
// width at least 256 (1 for a width under 512). The threads take the files in turn, over and
// over, until the time is up; decodes that end after it are not counted. Files a decoder refuses
// (CMYK in the jpeg mode: the proxy would hand them to libvips) are counted apart.
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jpeglib.h>
#include <setjmp.h>
#include <vips/vips.h>

#include "../../Sources/CJPEG/include/jpeg_scaled.h"

typedef struct {
    const char *name;
    unsigned char *data;
    size_t length;
    int width, height, scale;
} source_file;

static source_file *files;
static int file_count;
static int use_vips, use_full, strict;
static atomic_int stop;
static atomic_long next_index;

typedef struct {
    long decoded, refused, failed;
    double output_pixels;
} thread_result;

static double seconds_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

// The JPEG header through libjpeg, for the width (and so the scale). Returns 0 on success.
typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
} header_error;

static void header_fail(j_common_ptr cinfo) { longjmp(((header_error *)cinfo->err)->jump, 1); }
static void header_quiet(j_common_ptr cinfo, int level) { (void)cinfo; (void)level; }

static int read_size(const unsigned char *data, size_t length, int *width, int *height) {
    struct jpeg_decompress_struct cinfo;
    header_error error;
    cinfo.err = jpeg_std_error(&error.pub);
    error.pub.error_exit = header_fail;
    error.pub.emit_message = header_quiet;
    if (setjmp(error.jump)) {
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)length);
    jpeg_read_header(&cinfo, TRUE);
    *width = (int)cinfo.image_width;
    *height = (int)cinfo.image_height;
    jpeg_destroy_decompress(&cinfo);
    return 0;
}

static void quiet_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)domain; (void)level; (void)message; (void)data;
}

static int thumbnail_scale(int width) {
    for (int scale = 8; scale >= 2; scale /= 2) {
        if (width >= 256 * scale) return scale;
    }
    return 1;
}

// The whole file through libjpeg at 1/`scale` (every scan, libjpeg's default options: what a decoder
// that does not skip scans does), into one buffer of RGB or grey rows. Returns as decode_once does.
static int decode_full(const source_file *file, double *pixels) {
    struct jpeg_decompress_struct cinfo;
    header_error error;
    unsigned char *volatile buffer = NULL;
    cinfo.err = jpeg_std_error(&error.pub);
    error.pub.error_exit = header_fail;
    error.pub.emit_message = header_quiet;
    if (setjmp(error.jump)) {
        jpeg_destroy_decompress(&cinfo);
        free(buffer);
        return -1;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, file->data, (unsigned long)file->length);
    jpeg_read_header(&cinfo, TRUE);
    if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {  // as the jpeg mode: refused
        jpeg_destroy_decompress(&cinfo);
        return 1;
    }
    cinfo.scale_num = 1;
    cinfo.scale_denom = (unsigned)file->scale;
    jpeg_start_decompress(&cinfo);
    size_t row_bytes = (size_t)cinfo.output_width * (size_t)cinfo.output_components;
    buffer = malloc(row_bytes * cinfo.output_height);
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = buffer + row_bytes * cinfo.output_scanline;
        jpeg_read_scanlines(&cinfo, &row, 1);
    }
    *pixels += (double)cinfo.output_width * cinfo.output_height;
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    free(buffer);
    return 0;
}

// One decode; returns 0 (decoded), 1 (refused: unsupported, the caller would fall back), -1 (failed).
static int decode_once(const source_file *file, double *pixels) {
    if (use_full) return decode_full(file, pixels);
    if (use_vips) {
        VipsImage *image = NULL;
        if (vips_jpegload_buffer(file->data, file->length, &image, "shrink", file->scale, "fail_on",
                                 strict ? VIPS_FAIL_ON_WARNING : VIPS_FAIL_ON_NONE, NULL) != 0) {
            vips_error_clear();
            return -1;
        }
        size_t size = 0;
        void *memory = vips_image_write_to_memory(image, &size);
        *pixels += (double)image->Xsize * image->Ysize;
        g_object_unref(image);
        if (memory == NULL) {
            vips_error_clear();
            return -1;
        }
        g_free(memory);
        return 0;
    }
    imagery_jpeg_image image;
    char message[200];
    int status = imagery_jpeg_decode_scaled(file->data, file->length, file->scale, strict, 100000000, &image, message,
                                            sizeof message);
    if (status == IMAGERY_JPEG_OK) *pixels += (double)image.width * image.height;
    imagery_jpeg_free(&image);
    return status == IMAGERY_JPEG_OK ? 0 : status == IMAGERY_JPEG_UNSUPPORTED ? 1 : -1;
}

static void *worker(void *argument) {
    thread_result *result = argument;
    while (!atomic_load(&stop)) {
        long index = atomic_fetch_add(&next_index, 1) % file_count;
        double pixels = 0;
        int outcome = decode_once(&files[index], &pixels);
        if (atomic_load(&stop)) break;  // finished after the time was up
        result->output_pixels += pixels;
        if (outcome == 0) result->decoded++;
        else if (outcome > 0) result->refused++;
        else result->failed++;
    }
    return NULL;
}

int main(int argc, char **argv) {
    int threads = 1, keep_heap = 0;
    double duration = 5;
    int option;
    while ((option = getopt(argc, argv, "t:d:m:sM")) != -1) {
        switch (option) {
        case 't': threads = atoi(optarg); break;
        case 'd': duration = atof(optarg); break;
        case 'm':
            use_vips = strcmp(optarg, "vips") == 0;
            use_full = strcmp(optarg, "full") == 0;
            break;
        case 's': strict = 1; break;
        case 'M': keep_heap = 1; break;
        default:
            fprintf(stderr, "usage: %s [-t threads] [-d seconds] [-m jpeg|vips|full] [-s] [-M] files...\n", argv[0]);
            return 2;
        }
    }
    if (threads < 1 || optind >= argc) {
        fprintf(stderr, "usage: %s [-t threads] [-d seconds] [-m jpeg|vips|full] [-s] [-M] files...\n", argv[0]);
        return 2;
    }
    if (keep_heap) {
        mallopt(M_ARENA_MAX, 1);  // worker threads would otherwise get arenas that give memory back
        mallopt(M_MMAP_THRESHOLD, 32 << 20);
        mallopt(M_TRIM_THRESHOLD, 1 << 30);
    }
    if (use_vips) {
        if (VIPS_INIT(argv[0]) != 0) return 1;
        vips_cache_set_max(0);
        vips_cache_set_max_mem(0);
        vips_concurrency_set(1);  // each decode on its own thread; the parallelism is -t
        g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING, quiet_log, NULL);  // "unknown EXIF resolution unit"
    }

    files = calloc((size_t)(argc - optind), sizeof *files);
    for (int i = optind; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (f == NULL) continue;
        fseek(f, 0, SEEK_END);
        long length = ftell(f);
        fseek(f, 0, SEEK_SET);
        source_file file = {.name = argv[i], .length = (size_t)(length > 0 ? length : 0)};
        file.data = malloc(file.length ? file.length : 1);
        int ok = file.data && fread(file.data, 1, file.length, f) == file.length &&
                 read_size(file.data, file.length, &file.width, &file.height) == 0;
        fclose(f);
        if (!ok) {
            fprintf(stderr, "skipping %s: not a readable JPEG\n", argv[i]);
            free(file.data);
            continue;
        }
        file.scale = thumbnail_scale(file.width);
        files[file_count++] = file;
    }
    if (file_count == 0) return 1;

    pthread_t *ids = calloc((size_t)threads, sizeof *ids);
    thread_result *results = calloc((size_t)threads, sizeof *results);
    double start = seconds_now();
    for (int t = 0; t < threads; t++) pthread_create(&ids[t], NULL, worker, &results[t]);
    struct timespec pause = {.tv_sec = (time_t)duration, .tv_nsec = (long)((duration - (double)(time_t)duration) * 1e9)};
    nanosleep(&pause, NULL);
    atomic_store(&stop, 1);
    double elapsed = seconds_now() - start;
    thread_result total = {0};
    for (int t = 0; t < threads; t++) {
        pthread_join(ids[t], NULL);
        total.decoded += results[t].decoded;
        total.refused += results[t].refused;
        total.failed += results[t].failed;
        total.output_pixels += results[t].output_pixels;
    }

    printf("%s, %d thread%s, %.1f s, %d files%s: %.1f images/s (%ld decoded, %.1f Mpx/s out), %ld refused, %ld failed\n",
           use_vips ? "vips_jpegload_buffer" : use_full ? "libjpeg, every scan" : "imagery_jpeg_decode_scaled", threads, threads == 1 ? "" : "s", elapsed,
           file_count, keep_heap ? ", heap kept" : "", (double)total.decoded / elapsed, total.decoded,
           total.output_pixels / elapsed / 1e6, total.refused, total.failed);
    for (int i = 0; i < file_count; i++) free(files[i].data);
    free(files);
    free(ids);
    free(results);
    return 0;
}
