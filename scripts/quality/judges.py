"""The two judges of perceived quality, as scripts/output-quality uses them.

- butteraugli: Debian's `butteraugli` (Google's 2017-01-16 release). It prints only the maximum of its
  difference map; the 3-norm (libjxl's `ComputeDistanceP` with p = 3: the mean of the 3-, 6- and
  12-norms of the map) is computed here from the heat map it writes, read back to distances. The heat
  map's colour scale is piecewise linear in the distance, with steps of at most 0.5 % of the "good"
  threshold (0.84), so the read-back map is the binary's own to within that; distances above 11.07
  saturate (never at the qualities measured). The maximum read back agrees with the printed one to
  0.005 on the corpus.
- SSIMULACRA2: PyPI's `ssimulacra2` (a NumPy port of Cloudinary's reference), higher is better.
"""
import math
import os
import subprocess

import numpy as np
from ssimulacra2 import compute_ssimulacra2


def _fuzzy_class(score):
    width = 6.97490803335 if score < 1.0 else 10.287189655
    return 2.0 / (1.0 + math.exp((score - 1.0) * width))


def _fuzzy_inverse(seek):
    position, step = 0.0, 1.0
    while step >= 1e-10:
        position = position - step if _fuzzy_class(position) < seek else position + step
        step *= 0.5
    return position


# The thresholds butteraugli's heat map is drawn with (its main: ButteraugliFuzzyInverse(1.5) and (0.5)).
GOOD, BAD = _fuzzy_inverse(1.5), _fuzzy_inverse(0.5)


def _read_ppm(path):
    data = open(path, 'rb').read()
    magic, width, height, maximum, rest = data.split(maxsplit=4)
    width, height = int(width), int(height)
    return np.frombuffer(rest[-width * height * 3:], dtype=np.uint8).reshape(height, width, 3).astype(np.float64)


def _distances(rgb):
    """The heat map's colours back to distances (the middle of each colour's interval)."""
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    d = np.zeros(r.shape)
    green = r == 0  # 0 ... GOOD/2: green 153 -> 255
    d[green] = (g[green] - 153 + 0.5) * (0.5 * GOOD) / 102
    yellowing = (r > 0) & (g == 255) & (b == 0)  # GOOD/2 ... GOOD: red 0 -> 255
    d[yellowing] = 0.5 * GOOD + (r[yellowing] + 0.5) * (0.5 * GOOD) / 255
    reddening = (r == 255) & (g < 255) & (b == 0)  # GOOD ... BAD: green 255 -> 0
    d[reddening] = GOOD + (255 - g[reddening] - 0.5) * (BAD - GOOD) / 255
    purple = (r == 255) & (g == 0) & (b > 0)  # BAD ... 5 BAD: blue 0 -> 255
    d[purple] = BAD + (b[purple] + 0.5) * 4 * BAD / 255
    whitening = (r == 255) & (b == 255) & (g > 0) & (g < 255)  # 5 BAD ... 10 BAD
    d[whitening] = 5 * BAD + (g[whitening] + 0.5) * 5 * BAD / 255
    d[(r == 255) & (g == 255) & (b == 255)] = 10 * BAD
    return d


def butteraugli_3norm(reference, distorted, work):
    heat_map = os.path.join(work, 'heat.ppm')
    subprocess.run(['butteraugli', reference, distorted, heat_map], capture_output=True, check=True)
    cubes = _distances(_read_ppm(heat_map)) ** 3
    return (np.mean(cubes) ** (1 / 3) + np.mean(cubes ** 2) ** (1 / 6) + np.mean(cubes ** 4) ** (1 / 12)) / 3


def ssimulacra2(reference, distorted):
    return compute_ssimulacra2(reference, distorted)
