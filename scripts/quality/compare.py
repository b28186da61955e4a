"""Bytes against perceived quality, side by side in one run (scripts/output-quality starts the servers).

Every corpus JPEG is made a reference thumbnail (--size px, sRGB, 8-bit, PNG, by libvips). Each encoder
encodes that same reference at every quality of a sweep; both judges score every output against it.
The comparison is at equal perceived quality: for encoder E at quality Q (80 by default) and another R,
R's bytes at E's score are read off R's sweep (bytes interpolated in log scale between the two
qualities whose scores surround it), and the ratio E's bytes / R's bytes is averaged over the images
(geometric mean). Below 1: E needs fewer bytes than R for what it shows.

Autoquality (`q=auto`: a quality per image, the lowest from 70 to 80 that meets a SSIMULACRA2 target)
is judged two ways. Per image, as above (which measures the encoder, not the choice). And over the
corpus: against the fixed quality Q* at which the other encoder's mean score over the images equals
autoquality's mean score (by each judge; scores and log-bytes interpolated between the sweep's
qualities), the geometric mean of the bytes ratios: the same average perceived quality, fewer bytes?
A third table bounds what any per-image choice could give: each image at the lowest quality of the
sweep whose score by the judge itself meets a target, compared over the corpus the same way.
"""
import argparse
import glob
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

import pyvips

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import judges  # noqa: E402

SWEEP = [40, 50, 60, 70, 75, 80, 85, 90, 95]
# WebP, AVIF and JPEG XL through Imagery (--formats): each at these qualities and at its default.
FORMATS = ['webp', 'avif', 'jxl']
FORMAT_SWEEP = [30, 40, 50, 60, 70, 80, 90]


def fetch(url):
    with urllib.request.urlopen(url, timeout=120) as response:
        return response.read()


def make_encoders(args):
    origin = f'http://127.0.0.1:{args.origin_port}'

    def imagery(name, image, quality):
        source = urllib.parse.quote(f'{origin}/{name}', safe='')
        return fetch(f'http://127.0.0.1:{args.imagery_port}/image?url={source}&format=jpeg&q={quality}')

    def thumbor(name, image, quality):
        return fetch(f'http://127.0.0.1:{args.thumbor_port}/unsafe/filters:format(jpeg):quality({quality})/{name}')

    return {
        # imgproxy's open-source JPEG: libvips' jpegsave with optimize_coding (libjpeg-turbo behaviour:
        # libvips resets mozjpeg to its libjpeg-compatible profile unless asked otherwise).
        'imgproxy-oss': lambda name, image, quality: image.jpegsave_buffer(Q=quality, optimize_coding=True, strip=True),
        # mozjpeg as sharp sets it (`mozjpeg: true`): trellis quantisation, overshoot deringing, optimised
        # progressive scans, quantisation table 3. The yardstick, from PyPI's pyvips-binary.
        'mozjpeg': lambda name, image, quality: image.jpegsave_buffer(
            Q=quality, optimize_coding=True, strip=True, trellis_quant=True, overshoot_deringing=True,
            optimize_scans=True, interlace=True, quant_table=3),
        'thumbor': thumbor,
        'imagery': imagery,
    }


def make_references(corpus, size, directory, limit):
    names = []
    for path in sorted(glob.glob(os.path.join(corpus, '*.jpg')))[:limit]:
        # In sRGB and saved without a profile: every encoder gets these pixels as they are (a server
        # would convert pixels tagged with another profile, which the judges, reading raw values, do not).
        image = pyvips.Image.thumbnail(path, size, export_profile='srgb').colourspace('srgb')
        if image.bands == 4:
            image = image.flatten()
        name = os.path.splitext(os.path.basename(path))[0] + '.png'
        image.cast('uchar').pngsave(os.path.join(directory, name), strip=True)
        names.append(name)
    return names


def bytes_at(points, score, judge):
    """Bytes at `score` on a sweep [(bytes, butteraugli, ssimulacra2)], log-linear between neighbours."""
    pairs = sorted((point[judge], math.log(point[0])) for point in points)
    for (x0, y0), (x1, y1) in zip(pairs, pairs[1:]):
        if x0 <= score <= x1:
            return math.exp(y0 if x1 == x0 else y0 + (score - x0) * (y1 - y0) / (x1 - x0))
    (x0, y0), (x1, y1) = pairs[:2] if score < pairs[0][0] else pairs[-2:]  # past an end: extend its segment
    return math.exp(y0 + (score - x0) * (y1 - y0) / ((x1 - x0) or 1e-9))


def along_sweep(sweep, quality, index):
    """A sweep's value at a quality between two of its qualities: linear in the score, log-linear in bytes."""
    for q0, q1 in zip(SWEEP, SWEEP[1:]):
        if q0 <= quality <= q1:
            t = (quality - q0) / (q1 - q0)
            a, b = sweep[q0][index], sweep[q1][index]
            return math.exp(math.log(a) + t * (math.log(b) - math.log(a))) if index == 0 else a + t * (b - a)
    raise ValueError(quality)


def corpus_matched(points, sweeps, judge):
    """Q* at which the sweeps' mean score by `judge` equals the mean of `points`, and the bytes ratio there."""
    names = list(points)
    mean = statistics.mean(points[n][judge] for n in names)
    low, high = float(SWEEP[0]), float(SWEEP[-1])
    for _ in range(60):  # butteraugli falls as the quality rises, SSIMULACRA2 rises
        middle = (low + high) / 2
        score = statistics.mean(along_sweep(sweeps[n], middle, judge) for n in names)
        if (score < mean) == (judge == 1):
            high = middle
        else:
            low = middle
    quality = (low + high) / 2
    return quality, geometric_mean(points[n][0] / along_sweep(sweeps[n], quality, 0) for n in names)


def imagery_output(args, name, query):
    source = urllib.parse.quote(f'http://127.0.0.1:{args.origin_port}/{name}', safe='')
    start = time.perf_counter()
    data = fetch(f'http://127.0.0.1:{args.imagery_port}/image?url={source}&{query}')
    return data, time.perf_counter() - start


def judged(args, reference, data, suffix, work):
    """(bytes, butteraugli, SSIMULACRA2) of an output in any format, read back to PNG (JPEG XL by the system's
    libvips: pyvips-binary has no JPEG XL loader)."""
    encoded, png = os.path.join(work, 'out.' + suffix), os.path.join(work, 'out.png')
    open(encoded, 'wb').write(data)
    if suffix == 'jxl':
        done = subprocess.run(['/usr/bin/vips', 'copy', encoded, png], capture_output=True, text=True, env={'PATH': '/usr/bin:/bin'})
        if done.returncode != 0:
            open('/tmp/failed-output.jxl', 'wb').write(data)
            sys.exit(f'vips could not read a JPEG XL output back ({len(data)} bytes, /tmp/failed-output.jxl): {done.stderr}')
    else:
        pyvips.Image.new_from_buffer(data, '').pngsave(png, strip=True)
    return (len(data), judges.butteraugli_3norm(reference, png, work), judges.ssimulacra2(reference, png))


def formats_table(args, names, results):
    """WebP, AVIF and JPEG XL at their defaults against JPEG's, and the quality of each that matches JPEG
    q80's mean score over the corpus by each judge (its calibration)."""
    work = tempfile.mkdtemp()
    table, seconds = {}, {}
    for name in names:
        reference = os.path.join(args.references, name)
        for fmt in FORMATS + ['jpeg']:
            for quality in (FORMAT_SWEEP if fmt != 'jpeg' else []) + ['default']:
                query = f'format={fmt}' + ('' if quality == 'default' else f'&q={quality}')
                data, spent = imagery_output(args, name, query)
                table[(fmt, name, quality)] = judged(args, reference, data, fmt, work)
                if quality == 'default':
                    seconds.setdefault(fmt, []).append(spent)
        print(f'  {name} (formats)', file=sys.stderr, flush=True)
    jpeg = {n: table[('jpeg', n, 'default')] for n in names}
    means = [statistics.mean(jpeg[n][j] for n in names) for j in (1, 2)]
    print()
    print(f'WebP, AVIF and JPEG XL through Imagery against its JPEG default (q80: butteraugli {means[0]:.3f}, SSIMULACRA2 {means[1]:.2f} '
          'on average). Q*: the quality whose mean score over the corpus equals JPEG\'s, by each judge. Equal quality: JPEG\'s bytes '
          'read off its sweep at the output\'s score, per image.')
    print()
    print('| format | Q* (butteraugli) | Q* (SSIMULACRA2) | default | default: butteraugli (mean, vs JPEG) | default: SSIMULACRA2 (mean, vs JPEG) '
          '| bytes / JPEG (same image) | equal quality / JPEG (butteraugli, SSIMULACRA2) | time per request |')
    print('|---|---|---|---|---|---|---|---|---|')
    for fmt in FORMATS + ['jpeg']:
        stars = []
        if fmt != 'jpeg':
            for judge in (1, 2):
                curve = [(q, statistics.mean(table[(fmt, n, q)][judge] for n in names)) for q in FORMAT_SWEEP]
                star = None
                for (q0, s0), (q1, s1) in zip(curve, curve[1:]):
                    if min(s0, s1) <= means[judge - 1] <= max(s0, s1) and s0 != s1:
                        star = q0 + (means[judge - 1] - s0) * (q1 - q0) / (s1 - s0)
                        break
                stars.append(f'{star:.1f}' if star is not None else 'out of range')
        own = {n: table[(fmt, n, 'default')] for n in names}
        b, s = (statistics.mean(own[n][j] for n in names) for j in (1, 2))
        same = geometric_mean(own[n][0] / jpeg[n][0] for n in names)
        equal = [geometric_mean(own[n][0] / bytes_at([results[('imagery', n, q)] for q in SWEEP], own[n][j], j) for n in names) for j in (1, 2)]
        print(f'| {fmt} | {" | ".join(stars) if stars else "— | —"} | {"" if fmt == "jpeg" else "server default"} '
              f'| {b:.3f} ({(b / means[0] - 1) * 100:+.1f} %) | {s:.2f} ({(s / means[1] - 1) * 100:+.1f} %) | {same:.3f} '
              f'| {equal[0]:.3f}, {equal[1]:.3f} | {statistics.median(seconds[fmt]) * 1000:.1f} ms |')


def geometric_mean(values):
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values))


def oracle_table(names, results):
    """The most a per-image quality choice can give Imagery's JPEG: the judge itself picks each image's quality.

    For each target, every image gets the lowest quality of the sweep (40 to 90) whose score by that judge
    meets the target (90 when none does), as a search on that judge with perfect knowledge would; the
    outputs are then compared with imgproxy-oss over the corpus as autoquality is (same mean score)."""
    print()
    print('The bound on autoquality: each image at the lowest quality of the sweep (40 to 90) whose score by the judge')
    print('itself meets a target (a search that knows the judge\'s answer), against imgproxy-oss at the same mean score.')
    print()
    print('| picked by | target | quality (mean) | corpus / imgproxy-oss at Q* (butteraugli, SSIMULACRA2) |')
    print('|---|---|---|---|')
    sweeps = {n: {s: results[('imgproxy-oss', n, s)] for s in SWEEP} for n in names}
    qualities = [s for s in SWEEP if s <= 90]
    for judge, label, targets in ((1, 'butteraugli', (1.2, 1.4, 1.6, 1.8, 2.0, 2.4, 2.8)), (2, 'SSIMULACRA2', (60, 65, 70, 75, 80))):
        for target in targets:
            chosen = {}
            for n in names:
                meets = [s for s in qualities if (results[('imagery', n, s)][judge] <= target if judge == 1 else results[('imagery', n, s)][judge] >= target)]
                chosen[n] = min(meets) if meets else qualities[-1]
            points = {n: results[('imagery', n, chosen[n])] for n in names}
            matched = [corpus_matched(points, sweeps, j) for j in (1, 2)]
            print(f'| {label} | {target} | {statistics.mean(chosen.values()):.1f} '
                  f'| {matched[0][1]:.3f} (Q* {matched[0][0]:.1f}), {matched[1][1]:.3f} (Q* {matched[1][0]:.1f}) |')


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--corpus', required=True)
    parser.add_argument('--size', type=int, default=256)
    parser.add_argument('--limit', type=int)
    parser.add_argument('--quality', type=int, default=80)
    parser.add_argument('--references', required=True, help='a directory the origin and thumbor serve')
    parser.add_argument('--origin-port', type=int, required=True)
    parser.add_argument('--imagery-port', type=int, required=True)
    parser.add_argument('--thumbor-port', type=int, required=True)
    parser.add_argument('--formats', action='store_true', help='also WebP, AVIF and JPEG XL against JPEG')
    args = parser.parse_args()

    encoders = make_encoders(args)
    names = make_references(args.corpus, args.size, args.references, args.limit)
    work = tempfile.mkdtemp()
    results = {}  # (encoder, name, quality) -> (bytes, butteraugli, ssimulacra2)
    seconds = {encoder: [] for encoder in encoders}
    for name in names:
        reference = os.path.join(args.references, name)
        image = pyvips.Image.new_from_file(reference).copy_memory()
        for encoder, encode in encoders.items():
            for quality in SWEEP:
                start = time.perf_counter()
                data = encode(name, image, quality)
                seconds[encoder].append(time.perf_counter() - start)
                if data[:2] != b'\xff\xd8':
                    sys.exit(f'{encoder} did not answer a JPEG for {name} at q{quality}')
                distorted = os.path.join(work, 'distorted.jpg')
                open(distorted, 'wb').write(data)
                results[(encoder, name, quality)] = (
                    len(data), judges.butteraugli_3norm(reference, distorted, work), judges.ssimulacra2(reference, distorted))
        # Autoquality: one request, the server's defaults.
        start = time.perf_counter()
        source = urllib.parse.quote(f'http://127.0.0.1:{args.origin_port}/{name}', safe='')
        with urllib.request.urlopen(f'http://127.0.0.1:{args.imagery_port}/image?url={source}&format=jpeg&q=auto', timeout=120) as response:
            data, chosen = response.read(), int(response.headers.get('X-Imagery-Quality', '0'))
        seconds['auto'] = seconds.get('auto', []) + [time.perf_counter() - start]
        distorted = os.path.join(work, 'distorted.jpg')
        open(distorted, 'wb').write(data)
        results[('imagery', name, 'auto')] = (
            len(data), judges.butteraugli_3norm(reference, distorted, work), judges.ssimulacra2(reference, distorted), chosen)
        print(f'  {name}', file=sys.stderr, flush=True)

    q = args.quality
    print(f'{len(names)} corpus JPEGs at {args.size} px, JPEG at q{q}; ratios are geometric means over the images.')
    print(f'Equal quality: the other encoder\'s bytes read off its sweep ({", ".join(map(str, SWEEP))}) at this one\'s score.')
    print()
    print('| encoder | bytes (median) | butteraugli 3-norm (mean) | SSIMULACRA2 (mean) | same q: bytes / imgproxy-oss '
          '| equal quality / imgproxy-oss (butteraugli, SSIMULACRA2) | equal quality / mozjpeg (butteraugli, SSIMULACRA2) | time per request |')
    print('|---|---|---|---|---|---|---|---|')
    for encoder in encoders:
        own = [results[(encoder, name, q)] for name in names]
        row = [encoder, f'{statistics.median(r[0] for r in own):,.0f}', f'{statistics.mean(r[1] for r in own):.3f}',
               f'{statistics.mean(r[2] for r in own):.2f}',
               f'{geometric_mean(results[(encoder, n, q)][0] / results[("imgproxy-oss", n, q)][0] for n in names):.3f}']
        for other in ('imgproxy-oss', 'mozjpeg'):
            ratios = []
            for judge in (1, 2):
                ratios.append(geometric_mean(
                    results[(encoder, n, q)][0] / bytes_at([results[(other, n, s)] for s in SWEEP], results[(encoder, n, q)][judge], judge)
                    for n in names))
            row.append(f'{ratios[0]:.3f}, {ratios[1]:.3f}')
        row.append(f'{statistics.median(seconds[encoder]) * 1000:.1f} ms')
        print('| ' + ' | '.join(row) + ' |')
    print()
    print('Autoquality (`q=auto`, the defaults: SSIMULACRA2 70, qualities 70 to 80) against fixed qualities. Per image: at each image\'s')
    print('own score. Corpus: against the fixed quality Q* whose mean score over the images is the same (Q* in brackets).')
    print()
    print('| output | bytes (median) | butteraugli (mean) | SSIMULACRA2 (mean) | quality (mean) | per image / imgproxy-oss (b, s) '
          '| corpus / imgproxy-oss at Q* (butteraugli, SSIMULACRA2) | corpus / mozjpeg at Q* (butteraugli, SSIMULACRA2) | time per request |')
    print('|---|---|---|---|---|---|---|---|---|')
    rows = [('Imagery q=auto', {n: results[('imagery', n, 'auto')] for n in names}, seconds['auto'])]
    rows += [(f'{e} q{q}', {n: results[(e, n, q)] + (q,) for n in names}, None) for e in ('imagery', 'mozjpeg')]
    for label, points, timing in rows:
        row = [label, f'{statistics.median(p[0] for p in points.values()):,.0f}', f'{statistics.mean(p[1] for p in points.values()):.3f}',
               f'{statistics.mean(p[2] for p in points.values()):.2f}', f'{statistics.mean(p[3] for p in points.values()):.1f}']
        per_image = [geometric_mean(points[n][0] / bytes_at([results[('imgproxy-oss', n, s)] for s in SWEEP], points[n][j], j) for n in names)
                     for j in (1, 2)]
        row.append(f'{per_image[0]:.3f}, {per_image[1]:.3f}')
        for other in ('imgproxy-oss', 'mozjpeg'):
            sweeps = {n: {s: results[(other, n, s)] for s in SWEEP} for n in names}
            matched = [corpus_matched(points, sweeps, j) for j in (1, 2)]
            row.append(f'{matched[0][1]:.3f} (Q* {matched[0][0]:.1f}), {matched[1][1]:.3f} (Q* {matched[1][0]:.1f})')
        row.append(f'{statistics.median(timing) * 1000:.1f} ms' if timing else '')
        print('| ' + ' | '.join(row) + ' |')
    oracle_table(names, results)
    if args.formats:
        formats_table(args, names, results)
    print()
    print('Time per request: the median over the sweep; imgproxy-oss and mozjpeg encode in this process (libvips 8.18),')
    print('imagery and thumbor answer over HTTP (PNG decode, encode, the request): not comparable across the two groups.')


if __name__ == '__main__':
    main()
