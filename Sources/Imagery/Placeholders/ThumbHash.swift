import Foundation

/// ThumbHash (Evan Wallace's placeholder): about 25 bytes holding an image's average colour, aspect
/// ratio, alpha and lowest frequencies (luminance in more detail than colour), which decode to a
/// blurred 32-pixel preview. Carries more detail than BlurHash at a similar size, and alpha.
public enum ThumbHash {
    /// The hash of `image`, which must be at most 100 × 100 pixels (decode small first).
    /// - Precondition: `image` is at most 100 pixels on each side.
    public static func encode(_ image: Image) -> [UInt8] {
        let (width, height) = (image.width, image.height)
        precondition(width <= 100 && height <= 100, "ThumbHash encodes images of at most 100x100 pixels")
        let rgba = Self.rgba(image)
        let count = width * height
        // The average colour, weighted by alpha.
        var (averageR, averageG, averageB, averageA) = (0.0, 0.0, 0.0, 0.0)
        for index in 0..<count {
            let alpha = Double(rgba[4 * index + 3]) / 255
            averageR += alpha / 255 * Double(rgba[4 * index])
            averageG += alpha / 255 * Double(rgba[4 * index + 1])
            averageB += alpha / 255 * Double(rgba[4 * index + 2])
            averageA += alpha
        }
        if averageA > 0 {
            averageR /= averageA
            averageG /= averageA
            averageB /= averageA
        }
        let hasAlpha = averageA < Double(count)
        let luminanceLimit = hasAlpha ? 5.0 : 7.0
        let longest = Double(max(width, height))
        let lx = max(1, round(luminanceLimit * Double(width) / longest))
        let ly = max(1, round(luminanceLimit * Double(height) / longest))

        // RGBA to LPQA, composited over the average colour.
        var (l, p, q, a) = ([Double](), [Double](), [Double](), [Double]())
        for index in 0..<count {
            let alpha = Double(rgba[4 * index + 3]) / 255
            let r = averageR * (1 - alpha) + alpha / 255 * Double(rgba[4 * index])
            let g = averageG * (1 - alpha) + alpha / 255 * Double(rgba[4 * index + 1])
            let b = averageB * (1 - alpha) + alpha / 255 * Double(rgba[4 * index + 2])
            l.append((r + g + b) / 3)
            p.append((r + g) / 2 - b)
            q.append(r - g)
            a.append(alpha)
        }

        func encodeChannel(_ channel: [Double], _ nx: Int, _ ny: Int) -> (dc: Double, ac: [Double], scale: Double) {
            var (dc, ac, scale) = (0.0, [Double](), 0.0)
            for cy in 0..<ny {
                var cx = 0
                while cx * ny < nx * (ny - cy) {
                    let fx = (0..<width).map { cos(Double.pi / Double(width) * Double(cx) * (Double($0) + 0.5)) }
                    var f = 0.0
                    for y in 0..<height {
                        let fy = cos(Double.pi / Double(height) * Double(cy) * (Double(y) + 0.5))
                        for x in 0..<width { f += channel[x + y * width] * fx[x] * fy }
                    }
                    f /= Double(count)
                    if cx > 0 || cy > 0 {
                        ac.append(f)
                        scale = max(scale, abs(f))
                    } else {
                        dc = f
                    }
                    cx += 1
                }
            }
            if scale > 0 { ac = ac.map { 0.5 + 0.5 / scale * $0 } }
            return (dc, ac, scale)
        }
        let luminance = encodeChannel(l, max(3, Int(lx)), max(3, Int(ly)))
        let blueYellow = encodeChannel(p, 3, 3)
        let redGreen = encodeChannel(q, 3, 3)
        let alphaChannel = hasAlpha ? encodeChannel(a, 5, 5) : nil

        // JavaScript's Math.round, which the reference uses (half up; every value here is >= 0).
        func round(_ value: Double) -> Int { Int((value + 0.5).rounded(.down)) }
        let isLandscape = width > height
        let header24 =
            round(63 * luminance.dc) | round(31.5 + 31.5 * blueYellow.dc) << 6 | round(31.5 + 31.5 * redGreen.dc) << 12
            | round(31 * luminance.scale) << 18 | (hasAlpha ? 1 << 23 : 0)
        let header16 =
            (isLandscape ? Int(ly) : Int(lx)) | round(63 * blueYellow.scale) << 3 | round(63 * redGreen.scale) << 9
            | (isLandscape ? 1 << 15 : 0)
        var hash: [UInt8] = [
            UInt8(header24 & 255), UInt8(header24 >> 8 & 255), UInt8(header24 >> 16), UInt8(header16 & 255),
            UInt8(header16 >> 8),
        ]
        let acStart = hasAlpha ? 6 : 5
        if let alphaChannel { hash.append(UInt8(round(15 * alphaChannel.dc) | round(15 * alphaChannel.scale) << 4)) }
        var acIndex = 0
        for ac in [luminance.ac, blueYellow.ac, redGreen.ac] + (alphaChannel.map { [$0.ac] } ?? []) {
            for f in ac {
                let position = acStart + acIndex >> 1
                if position >= hash.count { hash.append(0) }
                hash[position] |= UInt8(round(15 * f) << ((acIndex & 1) << 2))
                acIndex += 1
            }
        }
        return hash
    }

    /// The image's aspect ratio (width / height) as the hash records it.
    public static func aspectRatio(_ hash: [UInt8]) -> Double? {
        guard hash.count >= 5 else { return nil }
        let header = Int(hash[3])
        let hasAlpha = hash[2] & 0x80 != 0
        let isLandscape = hash[4] & 0x80 != 0
        let lx = isLandscape ? (hasAlpha ? 5 : 7) : header & 7
        let ly = isLandscape ? header & 7 : (hasAlpha ? 5 : 7)
        guard ly > 0 else { return nil }
        return Double(lx) / Double(ly)
    }

    /// The preview a hash stands for (RGBA, at most 32 pixels a side), or `nil` when it is not a ThumbHash.
    public static func decode(_ hash: [UInt8]) -> Image? {
        guard hash.count >= 5, let ratio = aspectRatio(hash) else { return nil }
        let header24 = Int(hash[0]) | Int(hash[1]) << 8 | Int(hash[2]) << 16
        let header16 = Int(hash[3]) | Int(hash[4]) << 8
        let lDC = Double(header24 & 63) / 63
        let pDC = Double(header24 >> 6 & 63) / 31.5 - 1
        let qDC = Double(header24 >> 12 & 63) / 31.5 - 1
        let lScale = Double(header24 >> 18 & 31) / 31
        let hasAlpha = header24 >> 23 != 0
        let pScale = Double(header16 >> 3 & 63) / 63
        let qScale = Double(header16 >> 9 & 63) / 63
        let isLandscape = header16 >> 15 != 0
        let lx = max(3, isLandscape ? (hasAlpha ? 5 : 7) : header16 & 7)
        let ly = max(3, isLandscape ? header16 & 7 : (hasAlpha ? 5 : 7))
        guard !hasAlpha || hash.count >= 6 else { return nil }
        let aDC = hasAlpha ? Double(hash[5] & 15) / 15 : 1
        let aScale = Double(hash[hasAlpha ? 5 : 0] >> 4) / 15
        let acStart = hasAlpha ? 6 : 5
        var acIndex = 0
        var truncated = false
        func decodeChannel(_ nx: Int, _ ny: Int, _ scale: Double) -> [Double] {
            var ac: [Double] = []
            for cy in 0..<ny {
                var cx = cy > 0 ? 0 : 1
                while cx * ny < nx * (ny - cy) {
                    let position = acStart + acIndex >> 1
                    guard position < hash.count else {
                        truncated = true
                        return ac
                    }
                    let nibble = Int(hash[position]) >> ((acIndex & 1) << 2) & 15
                    ac.append((Double(nibble) / 7.5 - 1) * scale)
                    acIndex += 1
                    cx += 1
                }
            }
            return ac
        }
        let lAC = decodeChannel(lx, ly, lScale)
        let pAC = decodeChannel(3, 3, pScale * 1.25)
        let qAC = decodeChannel(3, 3, qScale * 1.25)
        let aAC = hasAlpha ? decodeChannel(5, 5, aScale) : []
        guard !truncated else { return nil }

        let width = Int((ratio > 1 ? 32 : 32 * ratio).rounded())
        let height = Int((ratio > 1 ? 32 / ratio : 32).rounded())
        guard width > 0, height > 0 else { return nil }
        var pixels = Data(capacity: width * height * 4)
        let n = max(lx, hasAlpha ? 5 : 3)
        let m = max(ly, hasAlpha ? 5 : 3)
        for y in 0..<height {
            let fy = (0..<m).map { cos(Double.pi / Double(height) * (Double(y) + 0.5) * Double($0)) }
            for x in 0..<width {
                let fx = (0..<n).map { cos(Double.pi / Double(width) * (Double(x) + 0.5) * Double($0)) }
                var (l, p, q, a) = (lDC, pDC, qDC, aDC)
                var j = 0
                for cy in 0..<ly {
                    var cx = cy > 0 ? 0 : 1
                    let fy2 = fy[cy] * 2
                    while cx * ly < lx * (ly - cy) {
                        l += lAC[j] * fx[cx] * fy2
                        j += 1
                        cx += 1
                    }
                }
                j = 0
                for cy in 0..<3 {
                    var cx = cy > 0 ? 0 : 1
                    let fy2 = fy[cy] * 2
                    while cx < 3 - cy {
                        let f = fx[cx] * fy2
                        p += pAC[j] * f
                        q += qAC[j] * f
                        j += 1
                        cx += 1
                    }
                }
                if hasAlpha {
                    j = 0
                    for cy in 0..<5 {
                        var cx = cy > 0 ? 0 : 1
                        let fy2 = fy[cy] * 2
                        while cx < 5 - cy {
                            a += aAC[j] * fx[cx] * fy2
                            j += 1
                            cx += 1
                        }
                    }
                }
                let b = l - 2.0 / 3.0 * p
                let r = (3 * l - b + q) / 2
                let g = r - q
                // truncated, as the reference's Uint8Array
                func byte(_ value: Double) -> UInt8 { UInt8(max(0, 255 * min(1, value))) }
                pixels.append(contentsOf: [byte(r), byte(g), byte(b), byte(a)])
            }
        }
        return Image(width: width, height: height, pixelFormat: .rgba8, pixels: pixels, sourceFormat: .png)
    }

    /// An image's pixels as RGBA bytes.
    static func rgba(_ image: Image) -> [UInt8] {
        let image = image.withEightBitChannels()
        let channels = image.pixelFormat.bytesPerPixel
        var result = [UInt8]()
        result.reserveCapacity(image.width * image.height * 4)
        let bytes = [UInt8](image.pixels)
        for index in 0..<image.width * image.height {
            let base = index * channels
            let alpha = image.pixelFormat.hasAlpha ? bytes[base + channels - 1] : 255
            if image.pixelFormat.isGray {
                result.append(contentsOf: [bytes[base], bytes[base], bytes[base], alpha])
            } else {
                result.append(contentsOf: [bytes[base], bytes[base + 1], bytes[base + 2], alpha])
            }
        }
        return result
    }
}
