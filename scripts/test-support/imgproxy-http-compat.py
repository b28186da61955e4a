#!/usr/bin/env python3
"""imgproxy's own HTTP-level tests (imgproxy commit eef3b312) replayed, black box, against `imagery serve`.

Called by scripts/imgproxy-http-compat (see its header for what is covered and how to read the output):

    imgproxy-http-compat.py --imagery BINARY --testdata DIR [--known FILE] [--only REGEX] [--jobs N]

Each case is one of imgproxy's tests (or subtests, or one source file of a matrix/SVG subtest), named
FILE:TEST[/SUBTEST], with the configuration the Go test sets given to Imagery as IMGPROXY_* variables
(Imagery started once per distinct configuration, with a fresh cache directory), the origin the test
uses reproduced by a small http.server on 127.0.0.1 (one per case, recording the request headers it
got), and the test's assertions checked on the HTTP answer. Images are decoded and hashed with libvips
(pyvips), as imgproxy's testutil does; BMP and ICO answers are decoded as imgproxy's own loaders
(vips/bmpload.c, vips/icoload.c) decode them, since those are what imgproxy's test process hashes with.
"""
import argparse
import base64
import concurrent.futures
import email.utils
import fnmatch
import gzip
import hashlib
import hmac
import http.client
import http.server
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

os.environ.setdefault("VIPS_CONCURRENCY", "1")  # several requests are decoded at once: one thread each
import numpy as np  # noqa: E402
import pyvips  # noqa: E402

pyvips.cache_set_max(0)

# ------------------------------------------------------------------------------------------------
# Cases


class Skip(Exception):
    pass


class Fail(Exception):
    pass


def expect(cond, message):
    if not cond:
        raise Fail(message)


def all_of(*checks):
    """Runs every check (a Go test's soft assertions and its Require-s alike) and fails with all that failed."""
    problems = []
    for check in checks:
        try:
            check()
        except Fail as e:
            problems.append(str(e))
    expect(not problems, "; ".join(problems))


class Config:
    """The settings of one `imagery serve` start: IMGPROXY_* variables and the loopback rule."""

    def __init__(self, env, loopback=True):
        self.env = dict(env)
        self.loopback = loopback

    def key(self):
        return (tuple(sorted(self.env.items())), self.loopback)

    def describe(self, base):
        parts = [f"{k}={v}" for k, v in sorted(self.env.items()) if base.get(k) != v]
        parts += [f"{k} unset" for k in sorted(base) if k not in self.env]
        if not self.loopback:
            parts.append("no --allow-private-host")
        return " ".join(parts) or "harness defaults"


class Case:
    def __init__(self, file, name, config, fn, skip=None):
        self.file, self.name, self.config, self.fn, self.skip = file, name, config, fn, skip
        self.id = f"{file}:{name}"


CASES = []


def add(file, name, config, fn=None, skip=None):
    CASES.append(Case(file, name, config, fn, skip))


# ------------------------------------------------------------------------------------------------
# Origins: one http.server per case, as each Go test starts its own httptest server


def go_sniff(body):
    # the part of Go's http.DetectContentType the tests' bodies reach
    if body.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if body.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    return "text/plain; charset=utf-8"


class Origin:
    """handler(request) -> (status, [(name, value)], body). request.headers is case-insensitive."""

    def __init__(self, handler):
        self.requests = []
        origin = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                origin.requests.append(self)
                status, headers, body = handler(self)
                self.send_response(status)
                names = {k.lower() for k, _ in headers}
                bodiless = status in (204, 304) or status < 200
                if body and "content-type" not in names and not bodiless:
                    self.send_header("Content-Type", go_sniff(body))  # as Go's ResponseWriter does
                if "content-length" not in names and not bodiless:
                    self.send_header("Content-Length", str(len(body)))
                for k, v in headers:
                    self.send_header(k, v)
                self.end_headers()
                if body and not bodiless:
                    self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


# ------------------------------------------------------------------------------------------------
# Imagery


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Response:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def header(self, name):  # Go's Header.Get: the first value, or ""
        return self.headers.get(name) or ""

    def brief(self):
        text = self.body[:160].decode("utf-8", "replace").replace("\n", " ")
        return f"{self.status} {self.header('Content-Type')} {text!r}" if self.status >= 300 else str(self.status)


RUNNING = set()  # Imagery instances started and not yet stopped (stopped on the way out, whatever happens)


class Imagery:
    def __init__(self, binary, config, workdir, index):
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix=f"imagery-{index}-", dir=workdir)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("IMGPROXY_", "IMAGERY_"))}
        env.update(config.env)
        args = [binary, "serve", "--port", str(self.port), "--cache-dir", os.path.join(self.dir, "cache")]
        if config.loopback:
            args += ["--allow-private-host", "127.0.0.1"]
        self.log_path = os.path.join(self.dir, "imagery.log")
        self.log = open(self.log_path, "wb")
        self.process = subprocess.Popen(args, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        RUNNING.add(self)
        deadline = time.time() + 30
        while True:
            if self.process.poll() is not None:
                self.stop()
                raise RuntimeError(f"imagery exited ({self.process.returncode}): {self.log_tail()}")
            try:
                if self.get("/health").status == 200:
                    break
            except OSError:
                pass
            if time.time() > deadline:
                self.stop()
                raise RuntimeError(f"imagery did not answer /health in 30 s: {self.log_tail()}")
            time.sleep(0.05)

    def log_tail(self):
        self.log.flush()
        with open(self.log_path, "rb") as f:
            return f.read()[-600:].decode("utf-8", "replace").replace("\n", " | ")

    def get(self, path, headers=None):
        """A GET as Go's http.DefaultClient sends it: Accept-Encoding: gzip added (and the answer
        inflated) unless the caller sets Accept-Encoding itself."""
        headers = dict(headers or {})
        transparent_gzip = not any(k.lower() == "accept-encoding" for k in headers)
        if transparent_gzip:
            headers["Accept-Encoding"] = "gzip"
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            conn.putrequest("GET", path, skip_host=False, skip_accept_encoding=True)
            for k, v in headers.items():
                conn.putheader(k, v)
            conn.endheaders()
            r = conn.getresponse()
            body = r.read()
            if transparent_gzip and (r.headers.get("Content-Encoding") or "").lower() == "gzip":
                body = gzip.decompress(body)
                del r.headers["Content-Encoding"]
                del r.headers["Content-Length"]
            return Response(r.status, r.headers, body)
        finally:
            conn.close()

    def stop(self):
        RUNNING.discard(self)
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if not self.log.closed:
            self.log.flush()


class Ctx:
    def __init__(self, imagery):
        self.imagery = imagery
        self.origins = []

    def get(self, path, headers=None):
        return self.imagery.get(path, headers)

    def origin(self, handler):
        o = Origin(handler)
        self.origins.append(o)
        return o

    def close(self):
        for o in self.origins:
            o.close()


# ------------------------------------------------------------------------------------------------
# Image decoding and imgproxy's testutil hashes


def u16(b, o):
    return struct.unpack_from("<H", b, o)[0]


def u32(b, o):
    return struct.unpack_from("<I", b, o)[0]


def i32(b, o):
    return struct.unpack_from("<i", b, o)[0]


def decode_bmp(buf):
    """imgproxy's vips/bmpload.c, as a numpy array (uchar sRGB, 3 or 4 bands)."""
    if len(buf) < 54 or buf[:2] != b"BM":
        raise ValueError("not a BMP")
    offset, ihl = u32(buf, 10), u32(buf, 14)
    if ihl not in (40, 108, 124):
        raise ValueError(f"bmpload: incorrect BMP header length {ihl}")
    width, height = i32(buf, 18), i32(buf, 22)
    planes, bpp, compression, num_colors = u16(buf, 26), u16(buf, 28), u32(buf, 30), u32(buf, 46)
    pos = 14 + ihl
    has_alpha = bpp == 32
    if has_alpha and ihl > 40:
        has_alpha = u32(buf, 66) != 0
    bands = 4 if has_alpha else 3
    bytes_pp = bpp // 8 if bpp >= 8 else 1
    top_down = height < 0
    height = abs(height)
    if width <= 0 or height <= 0:
        raise ValueError("bmpload: unsupported BMP image dimensions")
    if planes != 1:
        raise ValueError("bmpload: planes != 1")
    if bpp not in (1, 2, 4, 8, 16, 24, 32):
        raise ValueError(f"bmpload: unsupported bit depth {bpp}")
    rle = (compression == 1 and bpp == 8) or (compression == 2 and bpp == 4)
    rmask = gmask = bmask = 0
    if not rle and compression in (3, 6):
        n = 4 if bpp > 24 else 3
        if ihl == 40:
            masks = list(struct.unpack_from(f"<{n}I", buf, pos)) + [0]
            pos += 4 * n
        else:
            masks = list(struct.unpack_from("<4I", buf, 54))
        rmask, gmask, bmask = masks[:3]
        amask = masks[3] if n > 3 else 0
        ok = (bpp == 16 and (rmask, gmask, bmask) in ((0xF800, 0x7E0, 0x1F), (0x7C00, 0x3E0, 0x1F))) or (
            bpp == 32 and (rmask, gmask, bmask, amask) == (0xFF0000, 0xFF00, 0xFF, 0xFF000000))
        if not ok:
            raise ValueError("bmpload: unsupported color masks "
                             f"{rmask:#x}/{gmask:#x}/{bmask:#x}/{amask:#x} at {bpp} bpp")
    elif not rle and compression != 0:
        raise ValueError(f"bmpload: compression {compression} not supported")
    palette = None
    if bpp <= 8:
        max_colors = 1 << bpp
        if num_colors == 0:
            num_colors = max_colors
        elif num_colors > max_colors:
            raise ValueError("bmpload: num_colors exceeds maximum for the given bpp")
        pal = np.zeros((max_colors, 4), np.uint8)
        raw = np.frombuffer(buf, np.uint8, num_colors * 4, pos).reshape(num_colors, 4)
        pal[:num_colors] = raw
        palette = pal[:, [2, 1, 0]]  # BGRx -> RGB
    out = np.zeros((height, width, bands), np.uint8)

    def row(y):
        return out[y if top_down else height - 1 - y]

    p = offset
    if rle:
        def write(dest_row, x, count, src=None, byte=None):
            bit, so = 8 - bpp, 0
            mask = (1 << bpp) - 1
            for i in range(count):
                v = (src[so] if src is not None else byte) >> bit
                if bit == 0:
                    bit, so = 8 - bpp, so + 1
                else:
                    bit -= bpp
                dest_row[x + i, :3] = palette[v & mask]
        cap = 8 // bpp
        dx = dy = 0
        for y in range(height):
            r = row(y)
            if dy > 0:
                dy -= 1
                continue
            x = 0
            if dx > 0:
                x, dx = dx, 0
            while True:
                if p + 2 > len(buf):
                    raise ValueError("bmpload: failed to read next RLE command")
                c0, c1 = buf[p], buf[p + 1]
                p += 2
                if c0 == 0:
                    if c1 == 0:
                        break
                    if c1 == 1:
                        dy, dx = 1 << 32, 0
                        break
                    if c1 == 2:
                        mx, my = buf[p], buf[p + 1]
                        p += 2
                        if my > 0:
                            dx, dy = min(x + mx, width), my
                            break
                        dy = my
                        x = min(x + mx, width)
                    else:
                        count = c1
                        nbytes = ((count + cap - 1) // cap + 1) & ~1
                        count = min(count, width - x)
                        write(r, x, count, src=buf[p:p + nbytes])
                        p += nbytes
                        x += count
                else:
                    count = min(c0, width - x)
                    write(r, x, count, byte=c1)
                    x += count
    elif bpp >= 24:
        row_size = (bytes_pp * width + 3) & ~3
        need = offset + row_size * height
        if len(buf) < need:
            raise ValueError("bmpload: failed to read raw data")
        data = np.frombuffer(buf, np.uint8, row_size * height, offset).reshape(height, row_size)
        px = data[:, :bytes_pp * width].reshape(height, width, bytes_pp)
        rows = px if top_down else px[::-1]
        out[..., 0], out[..., 1], out[..., 2] = rows[..., 2], rows[..., 1], rows[..., 0]
        if bands == 4:
            out[..., 3] = rows[..., 3]
    elif bpp == 16:
        row_size = (2 * width + 3) & ~3
        data = np.frombuffer(buf, np.uint8, row_size * height, offset).reshape(height, row_size)
        pxl = data[:, :2 * width].copy().view("<u2").astype(np.uint32)
        rows = pxl if top_down else pxl[::-1]
        out[..., 0] = ((((rows & rmask) >> 11) & 0xFF) << 3) & 0xFF
        out[..., 1] = ((((rows & gmask) >> 5) & 0xFF) << 2) & 0xFF
        out[..., 2] = (((rows & bmask) & 0xFF) << 3) & 0xFF
    else:
        cap = 8 // bpp
        row_size = ((width + cap - 1) // cap + 3) & ~3
        data = np.frombuffer(buf, np.uint8, row_size * height, offset).reshape(height, row_size)
        bits = np.unpackbits(data, axis=1)  # MSB first, as bmpload reads them
        idx = bits[:, :width * bpp].reshape(height, width, bpp)
        weights = (1 << np.arange(bpp - 1, -1, -1)).astype(np.uint8)
        idx = (idx * weights).sum(axis=2)
        rows = idx if top_down else idx[::-1]
        out[..., :3] = palette[rows]
    return out


def bmp_image(buf):
    a = decode_bmp(buf)
    h, w, b = a.shape
    return pyvips.Image.new_from_memory(a.tobytes(), w, h, b, "uchar").copy(interpretation="srgb")


def ico_image(buf):
    """imgproxy's vips/icoload.c: the largest entry (as its loop picks it), PNG or BMP."""
    count = u16(buf, 4)
    best = None
    for i in range(count):
        e = struct.unpack_from("<BBBBHHII", buf, 6 + 16 * i)
        if best is None or e[0] > best[0] or e[1] > best[1] or e[0] == 0 or e[1] == 0:
            best = e
    if best is None or best[7] == 0:
        raise ValueError("icoload: ICO file has no image which fits")
    data = buf[best[7]:best[7] + best[6]]
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        im = pyvips.Image.pngload_buffer(data)
    else:
        num_colors, bpp = u32(data, 32), u16(data, 14)
        if num_colors == 0 and bpp <= 8:
            pix = 14 + 40 + 4 * (1 << bpp)
        else:
            pix = 14 + 40 + 4 * num_colors
        d = bytearray(data)
        struct.pack_into("<i", d, 8, i32(data, 8) // 2)
        bmp = b"BM" + struct.pack("<I", len(data) + 14) + b"\0\0\0\0" + struct.pack("<I", pix) + bytes(d)
        im = bmp_image(bmp)
    w, h = best[0] or 256, best[1] or 256
    if (im.width, im.height) != (w, h):
        raise ValueError(f"icoload: ICO image has unexpected dimensions {im.width}x{im.height} (entry {w}x{h})")
    return im


def load_image(buf):
    """testutil's VIPS_LOAD_IMAGE: libvips' loader for the bytes (SVG re-loaded at dpi 96, scale 0.75)."""
    if buf[:2] == b"BM":
        return bmp_image(buf)
    if buf[:4] == b"\x00\x00\x01\x00":
        return ico_image(buf)
    im = pyvips.Image.new_from_buffer(buf, "")
    loader = im.get("vips-loader") if im.get_typeof("vips-loader") else ""
    if loader.startswith("magick"):
        raise ValueError(f"only ImageMagick reads this ({loader}); imgproxy's libvips has no loader for it")
    if loader.startswith("svgload"):
        im = pyvips.Image.new_from_buffer(buf, "", dpi=96.0, scale=0.75)
    return im


def is_bw(im):
    """vips_image_guess_interpretation(im) in (B_W, GREY16): the declared one if sane, else the default."""
    t, b, f = im.interpretation, im.bands, im.format
    if t == "b-w" and b <= 2:
        return True
    if t == "grey16" and b <= 2 and f not in ("uchar", "char"):
        return True
    sane = not (t in ("b-w", "grey16", "multiband")
                or (t in ("srgb", "rgb", "scrgb", "lab", "labs", "lch", "cmc", "xyz", "yxy", "hsv") and b < 3)
                or (t == "rgb16" and (b < 3 or f in ("uchar", "char"))))
    return (not sane) and b <= 2


def dct_hash(im):
    """testutil/dct2.c vips_dct2_hash."""
    bw = is_bw(im)
    if im.hasalpha():
        # libvips 8.14 (here) scales a 16-bit alpha by 1/256 into scRGB (a little over 255), which
        # vips_flatten then over-weights; the libvips of imgproxy's tests keeps it within 0..255.
        max_alpha = {"ushort": 65535.0, "short": 32767.0, "float": 1.0 if im.interpretation == "scrgb" else 255.0,
                     "double": 1.0 if im.interpretation == "scrgb" else 255.0}.get(im.format, 255.0)
        colour = im.extract_band(0, n=im.bands - 1)
        alpha = im.extract_band(im.bands - 1).cast("float") * (255.0 / max_alpha)
        scrgb = colour.colourspace("scrgb")
        if scrgb.bands > 3:
            scrgb = scrgb.extract_band(0, n=3)
        im = scrgb.bandjoin(alpha).copy(interpretation="scrgb")
    else:
        im = im.colourspace("scrgb")
    ws, hs = min(64.0 / im.width, 1.0), min(64.0 / im.height, 1.0)
    im = im.resize(ws, vscale=hs, kernel="lanczos3")
    if im.hasalpha():
        im = im.flatten(background=[1.0, 0.0, 1.0], max_alpha=255)
    im = im.colourspace("lab")
    if bw:
        im = im.extract_band(0)
    im = im.cast("float")
    a = np.ndarray(buffer=im.write_to_memory(), dtype=np.float32,
                   shape=(im.height, im.width, im.bands)).astype(np.float64)
    h, w, _ = a.shape
    k = np.arange(8)
    cu = np.cos((2.0 * np.arange(w)[None, :] + 1.0) * k[:, None] * np.pi / (2.0 * w)).astype(np.float32)
    cv = np.cos((2.0 * np.arange(h)[None, :] + 1.0) * k[:, None] * np.pi / (2.0 * h)).astype(np.float32)
    out = np.einsum("vy,yxc,ux->cvu", cv.astype(np.float64), a, cu.astype(np.float64))
    au = np.where(k == 0, 1 / np.sqrt(w), np.sqrt(2.0 / w))
    av = np.where(k == 0, 1 / np.sqrt(h), np.sqrt(2.0 / h))
    return (out * av[None, :, None] * au[None, None, :]).reshape(-1).astype(np.float32)


def read_hash(path):
    d = open(path, "rb").read()
    if d[0] != 1:
        raise ValueError(f"{path}: not a DCT hash")
    n = u16(d, 1)
    return np.frombuffer(d, "<f4", n, 3)


def distance(a, b):
    if len(a) != len(b):
        return float(np.finfo(np.float32).max)
    d = (a - b).astype(np.float32)
    return float(np.float32(np.sum(d * d, dtype=np.float32)) / np.float32(len(a)))


def describe(im):
    return f"{im.width}x{im.height} {im.bands}-band {im.format} {im.interpretation}"


def rgba_pixels(buf):
    """testutil/vips.c vips_rgba_image_data."""
    im = load_image(buf).colourspace("srgb")
    if not im.hasalpha():
        im = im.addalpha()
    return im, im.write_to_memory()


# ------------------------------------------------------------------------------------------------
# The cases


def define_cases(td):
    ti = os.path.join(td, "test-images")
    png = open(os.path.join(td, "test1.png"), "rb").read()
    svg = open(os.path.join(td, "test1.svg"), "rb").read()
    sanitized = open(os.path.join(td, "test1.sanitized.svg"), "rb").read()
    geometry = open(os.path.join(td, "geometry.png"), "rb").read()
    jpg = open(os.path.join(ti, "jpg", "jpg.jpg"), "rb").read()

    harness = {  # testutil/servertest/suite.go SetupSuite
        "IMGPROXY_LOCAL_FILESYSTEM_ROOT": td,
        "IMGPROXY_DEVELOPMENT_ERRORS_MODE": "true",
        "IMGPROXY_ALLOW_SECURITY_OPTIONS": "true",
        "IMGPROXY_MAX_SRC_RESOLUTION": "50",
        "IMGPROXY_MAX_SRC_FILE_SIZE": str(10 * 1024 * 1024),
        "IMGPROXY_MAX_ANIMATION_FRAMES": "100",
        "IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION": "10.48576",
        # CLIENT_KEEP_ALIVE_TIMEOUT=0 too: left out, no HTTP-visible effect here
    }

    def cfg(loopback=True, **env):
        e = dict(harness)
        for k, v in env.items():
            if v is None:
                e.pop("IMGPROXY_" + k, None)
            else:
                e["IMGPROXY_" + k] = v
        return Config(e, loopback)

    def status(r, want):
        expect(r.status == want, f"expected status {want}, got {r.brief()}")

    def header(r, name, want):
        got = r.header(name)
        expect(got == want, f"expected {name}: {want!r}, got {got!r} (status {r.status})")

    def no_header(r, name):
        got = r.header(name)
        expect(got == "", f"expected no {name}, got {got!r} (status {r.status})")

    def serve(body, *headers, code=200):
        return lambda req: (code, list(headers), body)

    def http_date(t):
        return email.utils.formatdate(t, usegmt=True)

    def max_age(r):  # stream/handler_test.go maxAgeValue: Sscanf(cc, "max-age=%d")
        m = re.match(r"max-age=([+-]?\d+)", r.header("Cache-Control"))
        return int(m.group(1)) if m else 0

    # --- integration_test/processing_handler_test.go ------------------------------------------
    P = "processing_handler_test.go"
    keys = cfg(KEY="746573742d6b6579", SALT="746573742d73616c74")
    valid = base64.urlsafe_b64encode(hmac.new(b"test-key", b"test-salt/rs:fill:4:4/plain/local:///test1.png",
                                              hashlib.sha256).digest()).rstrip(b"=").decode()
    assert valid == "My9d3xq_PYpVHsPrCyww0Kh1w5KZeZhIlWhsa4az1TI"
    for name, sig, want in (("NoSignature", "unsafe", 403), ("BadSignature", "bad-signature", 403),
                            ("ValidSignature", valid, 200)):
        add(P, f"TestSignatureValidationFailure/{name}", keys,
            lambda c, sig=sig, want=want: status(c.get(f"/{sig}/rs:fill:4:4/plain/local:///test1.png"), want))

    hook = "Go test hook imagedata.RedirectAllRequestsTo: the fetch of an unreachable host is redirected to local:///test1.png"
    for name, allowed, path, want in (
            ("match http URL without wildcard", "local://,http://images.dev/",
             "/unsafe/plain/http://images.dev/lorem/ipsum.jpg", 200),
            ("match http URL with wildcard in hostname single level", "local://,http://*.mycdn.dev/",
             "/unsafe/plain/http://a-1.mycdn.dev/lorem/ipsum.jpg", 200),
            ("match http URL with wildcard in hostname multiple levels", "local://,http://*.mycdn.dev/",
             "/unsafe/plain/http://a-1.b-2.mycdn.dev/lorem/ipsum.jpg", 200),
            ("no match s3 URL with allowed local and http URLs", "local://,http://images.dev/",
             "/unsafe/plain/s3://images/lorem/ipsum.jpg", 404),
            ("no match http URL with wildcard in hostname including slash", "local://,http://*.mycdn.dev/",
             "/unsafe/plain/http://other.dev/.mycdn.dev/lorem/ipsum.jpg", 404)):
        if want == 200:
            add(P, f"TestSourceValidation/{name}", None, skip=hook)
        else:  # refused before any fetch, so no hook is needed
            add(P, f"TestSourceValidation/{name}", cfg(ALLOWED_SOURCES=allowed),
                lambda c, path=path: status(c.get(path), 404))

    def network(c, want):
        o = c.origin(serve(png))
        status(c.get(f"/unsafe/rs:fill:4:4/plain/{o.url}/test1.png"), want)
    add(P, "TestSourceNetworkValidation/AllowLoopbackSourceAddressesTrue", cfg(), lambda c: network(c, 200))
    add(P, "TestSourceNetworkValidation/AllowLoopbackSourceAddressesFalse", cfg(loopback=False),
        lambda c: network(c, 404))
    add(P, "TestSourceFormatNotSupported", None, skip="Go test hook vips.DisableLoadSupport(PNG)")
    add(P, "TestResultingFormatNotSupported", None, skip="Go test hook vips.DisableSaveSupport(PNG)")

    def same_body(r, want, what):
        status(r, 200)
        expect(r.body == want, f"expected the body byte-identical to {what}, got {len(r.body)} bytes "
                               f"{r.header('Content-Type')} ({len(want)} expected)")

    def differs(r, original, what):
        status(r, 200)
        expect(r.body != original, f"expected a body other than {what}, got it unchanged")

    skip_png = cfg(SKIP_PROCESSING_FORMATS="png")
    add(P, "TestSkipProcessingConfig", skip_png,
        lambda c: same_body(c.get("/unsafe/rs:fill:4:4/plain/local:///test1.png"), png, "test1.png"))
    add(P, "TestSkipProcessingPO", cfg(),
        lambda c: same_body(c.get("/unsafe/rs:fill:4:4/skp:png/plain/local:///test1.png"), png, "test1.png"))
    add(P, "TestSkipProcessingSameFormat", skip_png,
        lambda c: same_body(c.get("/unsafe/rs:fill:4:4/plain/local:///test1.png@png"), png, "test1.png"))
    add(P, "TestSkipProcessingDifferentFormat", skip_png,
        lambda c: differs(c.get("/unsafe/rs:fill:4:4/plain/local:///test1.png@jpg"), png, "test1.png"))

    def skip_svg(c):
        r = c.get("/unsafe/rs:fill:4:4/plain/local:///test1.svg")
        status(r, 200)
        # imgproxy's sanitizer output for test1.svg is test1.sanitized.svg (processing/svg/svg_test.go
        # compares them with surrounding whitespace trimmed)
        expect(r.body.strip() == sanitized.strip(),
               f"expected imgproxy's sanitized test1.svg ({len(sanitized.strip())} bytes), got "
               f"{len(r.body)} bytes {r.header('Content-Type')}: {r.body[:100]!r}...")
    add(P, "TestSkipProcessingSVG", cfg(), skip_svg)
    add(P, "TestNotSkipProcessingSVGToJPG", cfg(),
        lambda c: differs(c.get("/unsafe/rs:fill:4:4/plain/local:///test1.svg@jpg"), svg, "test1.svg"))
    add(P, "TestErrorSavingToSVG", cfg(),
        lambda c: status(c.get("/unsafe/rs:fill:4:4/plain/local:///test1.png@svg"), 422))

    def cc_passthrough_cc(c):
        o = c.origin(lambda req: (200, [("Cache-Control", "max-age=1234, public"),
                                        ("Expires", http_date(time.time() + 3600))], png))
        r = c.get("/unsafe/rs:fill:4:4/plain/" + o.url)
        all_of(lambda: status(r, 200), lambda: header(r, "Cache-Control", "max-age=1234, public"),
               lambda: no_header(r, "Expires"))

    def cc_passthrough_expires(c):
        o = c.origin(lambda req: (200, [("Expires", http_date(time.time() + 1239))], png))
        r = c.get("/unsafe/rs:fill:4:4/plain/" + o.url)
        cc = r.header("Cache-Control")
        all_of(lambda: expect(re.search(r"max-age=123[0-9], public", cc),
                              f"expected Cache-Control matching 'max-age=123[0-9], public', got {cc!r} (status {r.status})"),
               lambda: no_header(r, "Expires"))

    def cc_passthrough_disabled(c):
        o = c.origin(lambda req: (200, [("Cache-Control", "max-age=1234, public"),
                                        ("Expires", http_date(time.time() + 3600))], png))
        r = c.get("/unsafe/rs:fill:4:4/plain/" + o.url)
        cc = r.header("Cache-Control")
        all_of(lambda: expect(cc != "max-age=1234, public", f"expected Cache-Control other than the origin's, got {cc!r}"),
               lambda: no_header(r, "Expires"))
    add(P, "TestCacheControlPassthroughCacheControl", cfg(CACHE_CONTROL_PASSTHROUGH="true"), cc_passthrough_cc)
    add(P, "TestCacheControlPassthroughExpires", cfg(CACHE_CONTROL_PASSTHROUGH="true"), cc_passthrough_expires)
    add(P, "TestCacheControlPassthroughDisabled", cfg(CACHE_CONTROL_PASSTHROUGH="false"), cc_passthrough_disabled)

    def etag_disabled(c):
        r = c.get("/unsafe/rs:fill:4:4/plain/local:///test1.png")
        status(r, 200)
        no_header(r, "ETag")
    add(P, "TestETagDisabled", cfg(USE_ETAG="false"), etag_disabled)

    def etag_data_match(c):
        etag = '"loremipsumdolor"'
        o = c.origin(lambda req: (304, [("ETag", etag)], b""))
        r = c.get(f"/unsafe/plain/{o.url}", {"If-None-Match": etag})
        all_of(*[lambda req=req: expect(req.headers.get("If-None-Match"),  # the origin's soft assertion
                                        "expected the origin to get an If-None-Match, it got none")
                 for req in o.requests],
               lambda: status(r, 304), lambda: header(r, "ETag", etag))
    add(P, "TestETagDataMatch", cfg(USE_ETAG="true"), etag_data_match)

    lm2015 = "Wed, 21 Oct 2015 07:28:00 GMT"

    def last_modified(c, want):
        o = c.origin(serve(png, ("Last-Modified", lm2015)))
        r = c.get("/unsafe/rs:fill:4:4/plain/" + o.url)
        if want:
            header(r, "Last-Modified", want)
        else:
            no_header(r, "Last-Modified")
    add(P, "TestLastModifiedEnabled", cfg(USE_LAST_MODIFIED="true"), lambda c: last_modified(c, lm2015))
    add(P, "TestLastModifiedDisabled", cfg(USE_LAST_MODIFIED="false"), lambda c: last_modified(c, None))

    def parse_http_date(v):
        try:
            return email.utils.parsedate_to_datetime(v).timestamp() if v else None
        except (TypeError, ValueError):
            return None

    t2015 = parse_http_date(lm2015)

    def modified_since(c, ims, check, code, want):
        problems = []

        def handler(req):
            got = req.headers.get("If-Modified-Since")
            msg = check(got)
            if msg:
                problems.append(msg)
            return (code, [], png if code == 200 else b"")
        o = c.origin(handler)
        r = c.get(f"/unsafe/plain/{o.url}", {"If-Modified-Since": ims})
        all_of(lambda: expect(not problems, "; ".join(problems)), lambda: status(r, want))

    def no_ims(got):
        return f"expected the origin to get no If-Modified-Since, it got {got!r}" if got else None

    def ims_equal(value):
        return lambda got: None if got == value else f"expected the origin to get If-Modified-Since {value!r}, got {got!r}"

    def ims_after_2015(got):
        t = parse_http_date(got)
        return None if t is not None and t > t2015 else f"expected the origin to get an If-Modified-Since after 2015-10-21, got {got!r}"

    def ims_before_2015(got):
        t = parse_http_date(got)
        return None if t is not None and t < t2015 else f"expected the origin to get an If-Modified-Since before 2015-10-21, got {got!r}"

    lm_off, lm_on = cfg(USE_LAST_MODIFIED="false"), cfg(USE_LAST_MODIFIED="true")
    add(P, "TestModifiedSinceReqExactMatchLastModifiedDisabled", lm_off,
        lambda c: modified_since(c, lm2015, no_ims, 200, 200))
    add(P, "TestModifiedSinceReqExactMatchLastModifiedEnabled", lm_on,
        lambda c: modified_since(c, lm2015, ims_equal(lm2015), 304, 304))

    buster_now = int(time.time())
    buster_env = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(buster_now))
    add(P, "TestLastModifiedBuster", cfg(USE_LAST_MODIFIED="true", LAST_MODIFIED_BUSTER=buster_env),
        lambda c: last_modified(c, http_date(buster_now)))
    add(P, "EtagBusterTest", None, skip="not run by go test (no Test prefix); see request_test.go's etag buster cases")

    recent, old = "Thu, 25 Feb 2021 01:45:00 GMT", "Tue, 01 Oct 2013 17:31:00 GMT"
    add(P, "TestModifiedSinceReqCompareMoreRecentLastModifiedDisabled", lm_off,
        lambda c: modified_since(c, recent, no_ims, 200, 200))
    add(P, "TestModifiedSinceReqCompareMoreRecentLastModifiedEnabled", lm_on,
        lambda c: modified_since(c, recent, ims_after_2015, 304, 304))
    add(P, "TestModifiedSinceReqCompareTooOldLastModifiedDisabled", lm_off,
        lambda c: modified_since(c, old, no_ims, 200, 200))
    add(P, "TestModifiedSinceReqCompareTooOldLastModifiedEnabled", lm_on,
        lambda c: modified_since(c, old, ims_before_2015, 200, 200))

    def content_type(c, path, want, headers=None):
        r = c.get(path, headers)
        status(r, 200)
        header(r, "Content-Type", want)
    add(P, "TestAlwaysRasterizeSvg", cfg(ALWAYS_RASTERIZE_SVG="true"),
        lambda c: content_type(c, "/unsafe/rs:fill:40:40/plain/local:///test1.svg", "image/png"))
    add(P, "TestAlwaysRasterizeSvgWithEnforceWebP", cfg(ALWAYS_RASTERIZE_SVG="true", ENFORCE_WEBP="true"),
        lambda c: content_type(c, "/unsafe/plain/local:///test1.svg", "image/webp", {"Accept": "image/webp"}))
    add(P, "TestAlwaysRasterizeSvgDisabled", cfg(ALWAYS_RASTERIZE_SVG="false", ENFORCE_WEBP="true"),
        lambda c: content_type(c, "/unsafe/plain/local:///test1.svg", "image/svg+xml"))
    add(P, "TestAlwaysRasterizeSvgWithFormat", cfg(ALWAYS_RASTERIZE_SVG="true", SKIP_PROCESSING_FORMATS="svg"),
        lambda c: content_type(c, "/unsafe/plain/local:///test1.svg@svg", "image/svg+xml"))

    def max_src_file_size(c):
        o = c.origin(serve(png))
        status(c.get("/unsafe/rs:fill:4:4/plain/" + o.url), 422)
    add(P, "TestMaxSrcFileSizeGlobal", cfg(MAX_SRC_FILE_SIZE="1"), max_src_file_size)
    add(P, "TestRawOption", cfg(),
        lambda c: same_body(c.get("/unsafe/raw:1/plain/local:///test1.png"), png, "test1.png"))

    def max_bytes(c):
        mb = len(jpg) // 2
        r = c.get(f"/unsafe/mb:{mb}/plain/local:///test-images/jpg/jpg.jpg@jpg")
        status(r, 200)
        expect(len(r.body) <= mb, f"expected at most {mb} bytes, got {len(r.body)}")
    add(P, "TestMaxBytes", cfg(), max_bytes)

    jpg_hash = []

    def quality(c, paths, low, high):
        if not jpg_hash:
            jpg_hash.append(dct_hash(load_image(jpg)))
        for path in paths:
            r = c.get(path)
            status(r, 200)
            d = distance(jpg_hash[0], dct_hash(load_image(r.body)))
            expect(low <= d <= high, f"{path}: expected DCT distance to jpg.jpg in [{low}, {high}], got {d:.6g} "
                                     f"({len(r.body)} bytes)")
    src = "/plain/local:///test-images/jpg/jpg.jpg@jpg"
    add(P, "TestQualitySettings/q_99", cfg(), lambda c: quality(c, ["/unsafe/q:99" + src], 0.0, 0.0002))
    add(P, "TestQualitySettings/no_q", cfg(), lambda c: quality(c, ["/unsafe" + src], 0.004, 0.006))
    add(P, "TestQualitySettings/q_1_fq_1", cfg(),
        lambda c: quality(c, ["/unsafe/q:1" + src, "/unsafe/fq:jpg:1" + src], 303.0, 305.0))
    add(P, "TestPresetUsage", cfg(PRESETS="default=pixelate:10"),
        lambda c: differs(c.get("/unsafe/preset:default/plain/local:///geometry.png"), geometry, "geometry.png"))

    add("bmp_overflow_test.go", "TestBMPUnsupportedBitDepthRejected", cfg(),
        lambda c: status(c.get("/unsafe/rs:fill:4:4/plain/local:///bmp-invalid-bpp.bmp"), 500))

    # --- handlers/stream/handler_test.go (over HTTP: raw:1) ---------------------------------------
    S = "stream/handler_test.go"

    def stream_basic(c):
        o = c.origin(serve(png, ("Content-Type", "image/png")))
        r = c.get(f"/unsafe/raw:1/plain/{o.url}")
        status(r, 200)
        header(r, "Content-Type", "image/png")
        expect(r.body == png, f"expected test1.png's bytes, got {len(r.body)} bytes")
    add(S, "TestHandlerBasicRequest", cfg(), stream_basic)

    def stream_response_headers(c):
        o = c.origin(serve(png, ("Content-Type", "image/png"), ("Content-Length", str(len(png))),
                           ("Accept-Ranges", "bytes"), ("ETag", "etag"), ("Last-Modified", lm2015)))
        r = c.get(f"/unsafe/raw:1/plain/{o.url}")
        all_of(lambda: status(r, 200), lambda: header(r, "Content-Type", "image/png"),
               lambda: header(r, "Content-Length", str(len(png))), lambda: header(r, "Accept-Ranges", "bytes"),
               lambda: header(r, "ETag", "etag"), lambda: header(r, "Last-Modified", lm2015))
    add(S, "TestHandlerResponseHeadersPassthrough", cfg(), stream_response_headers)

    def stream_request_headers(c):
        etag = '"test-etag-123"'
        o = c.origin(serve(png, ("ETag", etag)))
        r = c.get(f"/unsafe/raw:1/plain/{o.url}",
                  {"If-None-Match": etag, "Accept-Encoding": "gzip", "Range": "bytes=*"})
        checks = []
        for req in o.requests:  # the origin hook's soft assertions
            for name, want in (("If-None-Match", etag), ("Accept-Encoding", "gzip"), ("Range", "bytes=*")):
                got = req.headers.get(name) or ""
                checks.append(lambda got=got, name=name, want=want: expect(
                    got == want, f"expected the origin to get {name}: {want!r}, got {got!r}"))
        all_of(*checks, lambda: status(r, 200), lambda: header(r, "ETag", etag))
    add(S, "TestHandlerRequestHeadersPassthrough", cfg(), stream_request_headers)

    def stream_disposition(c):
        o = c.origin(serve(png, ("Content-Type", "image/png")))
        r = c.get(f"/unsafe/raw:1/fn:custom_name/att:1/plain/{o.url}/test.png")
        status(r, 200)
        cd = r.header("Content-Disposition")
        expect("custom_name.png" in cd and "attachment" in cd,
               f"expected Content-Disposition with attachment and custom_name.png, got {cd!r}")
    add(S, "TestHandlerContentDisposition", cfg(), stream_disposition)

    def stream_cc(c, origin_headers, expires_in, check):
        def handler(req):
            hs = [("Content-Type", "image/png")]
            for k, v in origin_headers:
                hs.append((k, v() if callable(v) else v))
            return 200, hs, png
        o = c.origin(handler)
        opts = f"/exp:{int(time.time() + expires_in)}" if expires_in else ""
        r = c.get(f"/unsafe/raw:1{opts}/plain/{o.url}")
        all_of(lambda: status(r, 200), lambda: check(r))

    def max_age_near(want):
        def check(r):
            got = max_age(r)
            expect(abs(got - want) <= 60, f"expected max-age {want} (±60 s), got Cache-Control "
                                          f"{r.header('Cache-Control')!r}")
        return check

    def max_age_is(want):
        def check(r):
            expect(max_age(r) == want, f"expected max-age {want}, got Cache-Control {r.header('Cache-Control')!r}")
        return check

    def and_no_expires(check):
        def both(r):
            all_of(lambda: check(r), lambda: no_header(r, "Expires"))
        return both

    pt_on = cfg(CACHE_CONTROL_PASSTHROUGH="true", TTL="4242")
    pt_off = cfg(CACHE_CONTROL_PASSTHROUGH="false", TTL="4242")
    in1h = lambda: http_date(time.time() + 3600)  # noqa: E731
    in2h = lambda: http_date(time.time() + 7200)  # noqa: E731
    for name, conf, headers, expires_in, check in (
            ("Passthrough", pt_on, [("Cache-Control", "max-age=3600, public")], None,
             lambda r: header(r, "Cache-Control", "max-age=3600, public")),
            ("ExpiresPassthrough", pt_on, [("Expires", in1h)], None, and_no_expires(max_age_near(3600))),
            ("PassthroughDisabled", pt_off, [("Cache-Control", "max-age=3600, public")], None, max_age_is(4242)),
            ("WithProcessingOptionsExpires", pt_off, [], 3600, max_age_near(3600)),
            ("ProcessingOptionsOverridesOrigin", pt_on, [("Cache-Control", "max-age=7200, public")], 1800,
             max_age_near(1800)),
            ("BothHeadersPassthroughEnabled", pt_on, [("Cache-Control", "max-age=1800, public"), ("Expires", in1h)],
             None, and_no_expires(max_age_near(1800))),
            ("ProcessingOptionsOverridesBothOriginHeaders", pt_on,
             [("Cache-Control", "max-age=7200, public"), ("Expires", in2h)], 2700, and_no_expires(max_age_near(2700))),
            ("NoOriginHeaders", pt_off, [], None, max_age_is(4242))):
        add(S, f"TestHandlerCacheControl/{name}", conf,
            lambda c, h=headers, e=expires_in, ch=check: stream_cc(c, h, e, ch))

    def stream_csp(c):
        o = c.origin(serve(png, ("Content-Type", "image/png")))
        r = c.get(f"/unsafe/raw:1/plain/{o.url}")
        status(r, 200)
        header(r, "Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox")
    add(S, "TestHandlerSecurityHeaders", cfg(), stream_csp)

    def stream_error(c):
        o = c.origin(serve(b"Not Found", code=404))
        status(c.get(f"/unsafe/raw:1/plain/{o.url}"), 404)
    add(S, "TestHandlerErrorResponse", cfg(), stream_error)

    def stream_cookie(c):
        o = c.origin(serve(png, ("Cookie", "test_cookie=test_value")))
        r = c.get(f"/unsafe/raw:1/plain/{o.url}", {"Cookie": "test_cookie=test_value"})
        for req in o.requests:
            got = req.headers.get("Cookie") or ""
            m = re.search(r"(?:^|;\s*)test_cookie=([^;]*)", got)
            expect(m is None or m.group(1) == "test_value", f"origin got cookie test_cookie={m and m.group(1)!r}")
        status(r, 200)
    add(S, "TestHandlerCookiePassthrough", cfg(COOKIE_PASSTHROUGH="true"), stream_cookie)

    def stream_canonical(c, on):
        o = c.origin(serve(png, ("Content-Type", "image/png")))
        r = c.get(f"/unsafe/raw:1/plain/{o.url}")
        status(r, 200)
        link = r.header("Link")
        if on:
            want = f'<{o.url}>; rel="canonical"'
            expect(want in link, f"expected Link containing {want!r}, got {link!r}")
        else:
            expect(link == "", f"expected no Link, got {link!r}")
    add(S, "TestHandlerCanonicalHeader/SET_CANONICAL_HEADER=true", cfg(SET_CANONICAL_HEADER="true"),
        lambda c: stream_canonical(c, True))
    add(S, "TestHandlerCanonicalHeader/SET_CANONICAL_HEADER=false", cfg(SET_CANONICAL_HEADER="false"),
        lambda c: stream_canonical(c, False))

    # --- httpheaders/conditionalheaders/request_test.go (over HTTP: an http origin) ----------------
    C = "conditionalheaders/request_test.go"
    B = 1577836800  # 2020-01-01T00:00:00Z
    after, before = http_date(B + 3600), http_date(B - 3600)

    def ch_cfg(lm, lm_buster, et, et_buster):
        env = {"USE_LAST_MODIFIED": "true" if lm else "false", "USE_ETAG": "true" if et else "false"}
        if lm_buster:
            env["LAST_MODIFIED_BUSTER"] = "2020-01-01T00:00:00Z"
        if et_buster:
            env["ETAG_BUSTER"] = et_buster
        return cfg(**env)

    def b64(s):
        return base64.urlsafe_b64encode(s.encode()).rstrip(b"=").decode()

    def inject_request(c, ims, inm, want_ims, want_inm):
        o = c.origin(serve(png))
        hs = {}
        if ims:
            hs["If-Modified-Since"] = ims
        if inm:
            hs["If-None-Match"] = inm
        r = c.get(f"/unsafe/plain/{o.url}", hs)
        expect(o.requests, f"expected a request to the origin, it got none (imagery answered {r.brief()})")
        req = o.requests[0]
        checks = []
        for name, want in (("If-Modified-Since", want_ims), ("If-None-Match", want_inm)):
            got = req.headers.get(name) or ""
            checks.append(lambda got=got, name=name, want=want: expect(
                got == (want or ""), f"expected the origin to get {name}: {want!r}, got {got!r}"
                if want else f"expected the origin to get no {name}, got {got!r}"))
        all_of(*checks)

    for name, ims, inm, lm, lmb, et, etb, want_ims, want_inm in (
            ("all disabled", "", "", False, False, False, "", None, None),
            ("last modified enabled", after, "", True, False, False, "", after, None),
            ("etag enabled", "", "etag1", False, False, True, "", None, "etag1"),
            ("etag/lm enabled with no buster", after, "etag1", True, False, True, "", after, "etag1"),
            ("last modified after buster", after, "", True, True, False, "", after, None),
            ("last modified before buster", before, "", True, True, False, "", None, None),
            ("last modified enabled with buster, invalid header", "not-a-time", "", True, True, False, "", None, None),
            ("etag buster", "", "buster/" + b64("etag1"), False, False, True, "buster", None, "etag1"),
            ("both enabled, but last modified buster check fails, etag still works", before,
             "buster/" + b64("etag1"), True, True, True, "buster", None, "etag1"),
            ("both enabled, if-none-match with invalid base64", after, "buster/@@@", True, True, True, "buster",
             None, None),
            ("both enabled, but etag buster different", after, "buster/" + b64("etag1"), True, True, True,
             "different-buster", None, None),
            ("both enabled, but etag with no buster", after, "W/etag1", True, True, True, "buster", None, None)):
        add(C, f"TestInjectImageRequestHeaders/{name}", ch_cfg(lm, lmb, et, etb),
            lambda c, a=(ims, inm, want_ims, want_inm): inject_request(c, *a))

    def inject_response(c, lm_value, etag_value, want_lm, want_etag):
        hs = []
        if etag_value:
            hs.append(("ETag", etag_value))
        if lm_value:
            hs.append(("Last-Modified", lm_value))
        o = c.origin(serve(png, *hs))
        r = c.get(f"/unsafe/plain/{o.url}")
        all_of(lambda: status(r, 200),
               *[(lambda n=name, w=want: header(r, n, w)) if want else (lambda n=name: no_header(r, n))
                 for name, want in (("Last-Modified", want_lm), ("ETag", want_etag))])

    for name, lmv, etv, lm, lmb, et, etb, want_lm, want_etag in (
            ("all disabled", "", "", False, False, False, "", None, None),
            ("lastmod enabled no header", "", "", True, False, False, "", None, None),
            ("lastmod older than buster", before, "", True, True, False, "", http_date(B), None),
            ("lastmod after buster", after, "", True, True, False, "", after, None),
            ("lastmod invalid value", "not-a-time", "", True, True, False, "", None, None),
            ("etag enabled empty", "", "", False, False, True, "", None, None),
            ("etag enabled with value", "", "etag1", False, False, True, "buster", None, f'"buster/{b64("etag1")}"'),
            ("both enabled, both present, lm older", before, "etag2", True, True, True, "buster", http_date(B),
             f'"buster/{b64("etag2")}"')):
        add(C, f"TestInjectUserResponseHeaders/{name}", ch_cfg(lm, lmb, et, etb),
            lambda c, a=(lmv, etv, want_lm, want_etag): inject_response(c, *a))

    # --- clientfeatures/detector_test.go (over HTTP: the format chosen for Accept, and Vary) -------
    D = "clientfeatures/detector_test.go"
    mime = {"webp": "image/webp", "avif": "image/avif", "jxl": "image/jxl"}

    def auto_format(c, accept, want, want_explicit):
        # without a format in the URL: Prefer<F> picks <F>; with @png: only Enforce<F> overrides it
        # (processing/processing.go determineOutputFormat)
        for path, w in (("/unsafe/plain/local:///test1.png", want), ("/unsafe/plain/local:///test1.png@png", want_explicit)):
            r = c.get(path, {"Accept": accept})
            status(r, 200)
            got = r.header("Content-Type")
            expect(got == w, f"{path} with Accept {accept!r}: expected {w}, got {got}")

    for fmt, label in (("webp", "WebP"), ("avif", "Avif"), ("jxl", "JXL")):
        with_f = f"image/{fmt},image/apng,image/*,*/*;q=0.8"
        without = "image/apng,image/*,*/*;q=0.8"
        contains = {"webp": "ConainsWebP", "avif": "ContainsAvif", "jxl": "ContainsJXL"}[fmt]
        auto = cfg(**{f"AUTO_{fmt.upper()}": "true"})
        enforce = cfg(**{f"ENFORCE_{fmt.upper()}": "true"})
        add(D, f"TestFeaturesAutoFormats/Auto{label}_{contains}", auto,
            lambda c, a=with_f, m=mime[fmt]: auto_format(c, a, m, "image/png"))
        add(D, f"TestFeaturesAutoFormats/Auto{label}_DoesNotContain{label}", auto,
            lambda c, a=without: auto_format(c, a, "image/png", "image/png"))
        add(D, f"TestFeaturesAutoFormats/Enforce{label}_{contains.replace('Conains', 'Contains')}", enforce,
            lambda c, a=with_f, m=mime[fmt]: auto_format(c, a, m, m))
        add(D, f"TestFeaturesAutoFormats/Enforce{label}_DoesNotContain{label}", enforce,
            lambda c, a=without: auto_format(c, a, "image/png", "image/png"))
    add(D, "TestFeaturesAutoFormats/NoneEnabled_ContainsAll", cfg(),
        lambda c: auto_format(c, "image/webp,image/avif,image/jxl,image/apng,image/*,*/*;q=0.8",
                              "image/png", "image/png"))

    hints = ("IMGPROXY_ENABLE_CLIENT_HINTS is declared but not read from the environment by imgproxy at "
             "eef3b312: client hints cannot be enabled over HTTP")

    def size_is(c, path, headers, w, h):
        r = c.get(path, headers)
        status(r, 200)
        im = load_image(r.body)
        expect((im.width, im.height) == (w, h), f"{path} with {headers}: expected {w}x{h}, got {im.width}x{im.height}")

    for name in ("ClientHintsEnabled_ValidDPR", "ClientHintsEnabled_ValidSecChDPR",
                 "ClientHintsEnabled_ValidDprAndSecChDPR", "ClientHintsEnabled_InvalidDPR_Negative",
                 "ClientHintsEnabled_InvalidDPR_TooHigh", "ClientHintsEnabled_InvalidDPR_NonNumeric"):
        add(D, f"TestFeaturesClientHintsDPR/{name}", None, skip=hints)
    add(D, "TestFeaturesClientHintsDPR/ClientHintsDisabled", cfg(),  # a DPR of 2 or 3 would make it 10x10
        lambda c: size_is(c, "/unsafe/rs:fit:5:5/el:1/plain/local:///test1.png",
                          {"DPR": "2.0", "Sec-CH-DPR": "3.0"}, 5, 5))
    for name in ("ClientHintsEnabled_ValidWidth", "ClientHintsEnabled_ValidSecChWidth",
                 "ClientHintsEnabled_ValidWidthAndSecChWidth", "ClientHintsEnabled_InvalidWidth_Negative",
                 "ClientHintsEnabled_InvalidWidth_NonNumeric"):
        add(D, f"TestFeaturesClientHintsWidth/{name}", None, skip=hints)
    add(D, "TestFeaturesClientHintsWidth/ClientHintsDisabled", cfg(),  # a width hint would enlarge it
        lambda c: size_is(c, "/unsafe/el:1/plain/local:///test1.png", {"Width": "800", "Sec-CH-Width": "1024"},
                          10, 10))

    def vary(c):
        r = c.get("/unsafe/plain/local:///test1.png")
        status(r, 200)
        header(r, "Vary", "Accept")
    for label, var in (("AutoWebP", "AUTO_WEBP"), ("EnforceWebP", "ENFORCE_WEBP"), ("AutoAvif", "AUTO_AVIF"),
                       ("EnforceAvif", "ENFORCE_AVIF"), ("AutoJXL", "AUTO_JXL"), ("EnforceJXL", "ENFORCE_JXL")):
        add(D, f"TestSetVary/{label}_Enabled", cfg(**{var: "true"}), vary)
    add(D, "TestSetVary/EnableClientHints_Enabled", None, skip=hints)
    add(D, "TestSetVary/Combined", None, skip=hints)

    # --- integration_test/matrix_test.go ----------------------------------------------------------
    M = "matrix_test.go"
    matrix = cfg(MAX_ANIMATION_FRAMES="999", LOCAL_FILESYSTEM_ROOT=ti)
    formats = ["gif", "jpeg", "heic", "jxl", "svg", "tiff", "webp", "bmp", "ico"]
    hashes = os.path.join(td, "test-hashes", "TestMatrix", "TestMatrix")

    def matrix_case(c, folder, base, source, target):
        r = c.get(f"/insecure/plain/local:///{folder}/{base}@{target}")
        expect(r.status == 200, f"expected status 200, got {r.brief()}")
        path = os.path.join(hashes, source, target, base + ".hash")
        expect(os.path.exists(path), f"no stored hash {os.path.relpath(path, td)}")
        want = read_hash(path)
        try:
            im = load_image(r.body)
            got = dct_hash(im)
        except (pyvips.Error, ValueError, struct.error) as e:
            raise Fail(f"answer ({r.header('Content-Type')}, {len(r.body)} bytes) not decodable as imgproxy's "
                       f"test decodes it: {str(e).strip().splitlines()[0] if str(e).strip() else e!r}")
        d = distance(want, got)
        bands = f"{len(got) // 64}-band hash, stored {len(want) // 64}-band"
        expect(d <= 0.5, f"DCT distance {'(band count differs)' if len(got) != len(want) else f'{d:.3f}'} > 0.5: "
                         f"{bands}; answer {r.header('Content-Type')} {describe(im)}")

    for source in formats:
        folder = {"heic": "heif", "jpeg": "jpg"}.get(source, source)
        files = sorted(os.listdir(os.path.join(ti, folder)))
        for target in formats:
            sub = f"TestMatrix/{source}/{target}"
            if source != "svg" and target == "svg":
                add(M, sub, None, skip="we can not vectorize raster image (skipped by the test)")
                continue
            if target == "svg":
                add(M, sub, None, skip="target format not supported by VIPS: SVG is never savable (skipped by the test)")
                continue
            for base in files:
                add(M, f"{sub}/{base}", matrix,
                    lambda c, a=(folder, base, source, target): matrix_case(c, *a))

    # --- integration_test/svg_test.go ---------------------------------------------------------------
    V = "svg_test.go"
    suite = os.path.join(ti, "svg-test-suite")
    svg_cfg = cfg(LOCAL_FILESYSTEM_ROOT=suite, MAX_SRC_FILE_SIZE=str(100 * 1024 * 1024))
    ignored = {"struct-frag-01-t.svg": "bad dimensions", "struct-frag-04-t.svg": "failed to load",
               "kalarm.svg": "UTF-16 mismatch"}

    def svg_case(c, rel):
        try:
            src_im, src_px = rgba_pixels(open(os.path.join(suite, rel), "rb").read())
        except (pyvips.Error, ValueError) as e:
            raise Skip(f"the source itself does not render with this machine's libvips/librsvg: "
                       f"{str(e).strip().splitlines()[0]}")
        r = c.get(f"/insecure/plain/local:///{rel}")
        expect(r.status == 200, f"expected status 200, got {r.brief()}")
        try:
            im, px = rgba_pixels(r.body)
        except (pyvips.Error, ValueError) as e:
            raise Fail(f"answer ({r.header('Content-Type')}, {len(r.body)} bytes) does not load: "
                       f"{str(e).strip().splitlines()[0]}")
        if px != src_px:
            if (im.width, im.height, im.bands) != (src_im.width, src_im.height, src_im.bands):
                raise Fail(f"rendered {im.width}x{im.height}x{im.bands}, the source renders "
                           f"{src_im.width}x{src_im.height}x{src_im.bands} ({r.header('Content-Type')})")
            a = np.frombuffer(px, np.uint8).astype(np.int16)
            b = np.frombuffer(src_px, np.uint8).astype(np.int16)
            diff = np.abs(a - b)
            pixels = int((diff.reshape(-1, im.bands).max(axis=1) > 0).sum())
            raise Fail(f"rendered pixels differ from the source's: {pixels} of {im.width * im.height} pixels, "
                       f"max difference {int(diff.max())} ({r.header('Content-Type')}, {len(r.body)} bytes)")

    if os.path.isdir(suite):
        for rel in sorted(os.listdir(suite)):
            if not rel.lower().endswith(".svg") or os.path.isdir(os.path.join(suite, rel)):
                continue
            if rel in ignored:
                add(V, f"TestSvgSuite/{rel}", None, skip=f"in the test's ignore list ({ignored[rel]})")
                continue
            add(V, f"TestSvgSuite/{rel}", svg_cfg, lambda c, rel=rel: svg_case(c, rel))

    # --- testutil/image_hash_test.go: this replay's own DCT hash, checked against imgproxy's numbers
    H = "image_hash_test.go (self-check, no imagery)"
    dct2 = os.path.join(td, "dct2")
    original = []

    def hash_difference(name, want):
        if not original:
            original.append(dct_hash(load_image(open(os.path.join(dct2, "original.png"), "rb").read())))
        d = distance(original[0], dct_hash(load_image(open(os.path.join(dct2, name), "rb").read())))
        expect(abs(d - want) <= want * 0.01 + 0.001, f"expected distance {want} (±1%), got {d:.6f}")

    for name, want in (("brightness-minus1.png", 19.090097), ("brightness-minus10.png", 2008.260088),
                       ("brightness-minus30.png", 19580.743012), ("brightness-minus50.png", 59795.423867),
                       ("brightness-minus1-8bit.png", 35.761968), ("brightness-minus10-8bit.png", 2170.649351),
                       ("brightness-minus30-8bit.png", 20112.324396), ("brightness-minus50-8bit.png", 60799.682862),
                       ("jpeg-q99.jpg", 1.230422), ("jpeg-q80.jpg", 1.275000), ("jpeg-q60.jpg", 1.422987),
                       ("jpeg-q40.jpg", 1.904982), ("jpeg-q20.jpg", 2.367389), ("jpeg-q1.jpg", 95.573785),
                       ("hue-plus1.png", 50.101667), ("hue-plus10.png", 4834.754080), ("hue-plus50.png", 87091.950577),
                       ("region-5x5-hue-plus1.png", 0.000002), ("region-5x5-hue-plus10.png", 0.000472),
                       ("region-5x5-hue-plus50.png", 0.212683), ("region-10x10-hue-plus1.png", 0.000044),
                       ("region-10x10-hue-plus10.png", 0.010890), ("region-10x10-hue-plus50.png", 3.514549),
                       ("region-30x30-hue-plus1.png", 0.004835), ("region-30x30-hue-plus10.png", 0.782760),
                       ("region-30x30-hue-plus50.png", 185.500887), ("region-50x50-hue-plus1.png", 0.035596),
                       ("region-50x50-hue-plus10.png", 4.304423), ("region-50x50-hue-plus50.png", 840.811707)):
        add(H, f"TestDCT2HashDifference/dct2/{name}", "local", lambda c, n=name, w=want: hash_difference(n, w))

    def hash_length(rel, n):
        try:
            h = dct_hash(load_image(open(os.path.join(td, rel), "rb").read()))
        except pyvips.Error as e:
            raise Skip(f"this machine's libvips cannot read it: {' '.join(str(e).split())[:160]}")
        expect(len(h) == n, f"expected {n} coefficients, got {len(h)}")
    for rel, n in (("test-images/heif/8-bpp.heif", 192), ("test-images/heif/heif.heif", 192),
                   ("test-images/gif/gif.gif", 192), ("test-images/tiff/16-bpp-grayscale.tiff", 64),
                   ("test-images/tiff/16-bpp.tiff", 192), ("test-images/tiff/32-bpp-linear.tiff", 192),
                   ("test-images/tiff/4-bpp-grayscale.tiff", 64), ("test-images/tiff/8-bpp-grayscale.tiff", 64),
                   ("test-images/tiff/8-bpp.tiff", 192), ("test-images/tiff/tiff.tiff", 192),
                   ("test-images/svg/svg.svg", 192)):
        add(H, f"TestDCT2HashCalc/{rel}", "local", lambda c, r=rel, n=n: hash_length(r, n))
    return harness


# ------------------------------------------------------------------------------------------------
# Running


def run_case(case, ctx):
    try:
        case.fn(ctx)
        return "PASS", ""
    except Skip as e:
        return "SKIP", str(e)
    except Fail as e:
        return "FAIL", str(e)
    except Exception as e:  # noqa: BLE001 - a broken case is reported, not fatal
        return "FAIL", f"{type(e).__name__}: {e}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--imagery", required=True)
    ap.add_argument("--testdata", required=True)
    ap.add_argument("--known", help="file of KNOWN case ids (fnmatch patterns), '#' comments")
    ap.add_argument("--only", help="run only the cases whose id matches this regular expression")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                    help="an extra variable for every imagery start (diagnostics: not imgproxy's test configuration)")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    td = os.path.abspath(args.testdata)
    harness = define_cases(td)
    known = []
    if args.known:
        for line in open(args.known):
            line = line.split("#", 1)[0].strip()
            if line:
                known.append(line)
    for item in args.env:
        name, _, value = item.partition("=")
        for c in CASES:
            if isinstance(c.config, Config):
                c.config.env[name] = value
    cases = [c for c in CASES if not args.only or re.search(args.only, c.id)]
    results = {}
    for c in cases:
        if c.skip:
            results[c.id] = ("SKIP", c.skip)

    groups = {}
    for c in cases:
        if c.skip:
            continue
        key = c.config if c.config == "local" else c.config.key()
        groups.setdefault(key, []).append(c)
    workdir = tempfile.mkdtemp(prefix="imagery-imgproxy-compat-")
    started = time.time()
    lock = threading.Lock()

    def run_group(key, group, jobs):
        conf = group[0].config
        label = "hash self-check" if conf == "local" else conf.describe(harness)
        print(f"[imgproxy-http-compat] {len(group)} case(s): {label}", file=sys.stderr, flush=True)
        imagery = None
        try:
            if conf != "local":
                imagery = Imagery(args.imagery, conf, workdir, abs(hash(key)) % 100000)
        except RuntimeError as e:
            with lock:
                for c in group:
                    results[c.id] = ("FAIL", str(e))
            return

        def one(c):
            ctx = Ctx(imagery)
            try:
                res = run_case(c, ctx)
            finally:
                ctx.close()
            with lock:
                results[c.id] = res
        try:
            if jobs > 1:
                with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
                    list(pool.map(one, group))
            else:
                for c in group:
                    one(c)
        finally:
            if imagery:
                imagery.stop()

    small = [(k, g) for k, g in groups.items() if len(g) < 20]
    large = [(k, g) for k, g in groups.items() if len(g) >= 20]
    try:
        # small configurations: a few Imagery instances at once, their cases one after another
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            list(pool.map(lambda kg: run_group(kg[0], kg[1], 1), small))
        for k, g in large:  # the matrix and the SVG suite: one instance, requests in parallel
            run_group(k, g, args.jobs)
    finally:
        for imagery in list(RUNNING):
            imagery.stop()
        subprocess.run(["rm", "-rf", workdir])

    counts = {}
    failed = []
    known_hits = []
    known_passing = []
    for c in cases:
        state, detail = results.get(c.id, ("FAIL", "not run"))
        is_known = any(fnmatch.fnmatchcase(c.id, k) for k in known)
        if state == "FAIL" and is_known:
            state = "KNOWN"
            known_hits.append(c.id)
        elif state == "PASS" and is_known:
            known_passing.append(c.id)
        if state == "FAIL":
            failed.append(c.id)
        n = counts.setdefault(c.file, {"PASS": 0, "FAIL": 0, "KNOWN": 0, "SKIP": 0})
        n[state] += 1
        if state == "PASS":
            print(f"PASS  {c.id}")
        elif state == "SKIP":
            print(f"SKIP  {c.id} ({detail})")
        else:
            print(f"{state:<5} {c.id}: {detail}")
    print()
    for file, n in counts.items():
        print(f"{file}: {n['PASS']} pass, {n['FAIL']} fail, {n['KNOWN']} known, {n['SKIP']} skipped")
    for cid in known_passing:
        print(f"note: {cid} is in KNOWN but passes")
    total = {s: sum(n[s] for n in counts.values()) for s in ("PASS", "FAIL", "KNOWN", "SKIP")}
    print(f"imgproxy's HTTP-level tests against imagery: {total['PASS']} pass, {total['FAIL']} fail, "
          f"{total['KNOWN']} known, {total['SKIP']} skipped ({time.time() - started:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
