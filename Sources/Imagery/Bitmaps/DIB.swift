import Foundation

/// A device-independent bitmap: the headers, palette and pixels a BMP file holds after its file
/// header, and an ICO file holds for each icon that is not a PNG.
struct DIB {
    var header: BMP.Header
    /// 0 uncompressed, 1 RLE8, 2 RLE4, 3 bit fields, 6 bit fields with alpha.
    let compression: Int
    let topDown: Bool
    /// Red, green, blue, alpha masks (16 and 32 bits per pixel).
    let masks: [UInt32]
    /// Palette colours as (red, green, blue) (8 bits per pixel or fewer).
    let palette: [(UInt8, UInt8, UInt8)]
    /// Where the headers, masks and palette end (an icon's pixels start there).
    let end: Int

    /// Reads the headers (and palette) starting at `start`; `fileHeader`: checks BMP's "BM" first;
    /// `icon`: the height counts the AND mask too (ICO), so the image is half of it; `pixelOffset`: where the
    /// file says its pixels start (a palette ends there at the latest: OS/2 headers do not count their colours).
    static func parse(_ bytes: Bytes, at start: Int, fileHeader: Bool, icon: Bool = false, pixelOffset: Int? = nil)
        throws -> DIB
    {
        if fileHeader {
            guard try bytes.uint8(0) == 0x42, try bytes.uint8(1) == 0x4D else {
                throw bytes.corrupt("a BMP file starts with BM")
            }
        }
        let size = Int(try bytes.uint32(start))
        var (width, height, bitsPerPixel, compression, colours) = (0, 0, 0, 0, 0)
        var masks: [UInt32] = [0, 0, 0, 0]
        var paletteStart = start + size
        var entrySize = 4
        switch size {
        case 12:  // OS/2 1.x, Windows 2.x: 16-bit sizes, 3-byte palette entries
            width = try bytes.uint16(start + 4)
            height = try bytes.uint16(start + 6)
            bitsPerPixel = try bytes.uint16(start + 10)
            entrySize = 3
        case 16...124 where size != 12:
            width = try bytes.int32(start + 4)
            height = try bytes.int32(start + 8)
            bitsPerPixel = try bytes.uint16(start + 14)
            compression = size >= 20 ? Int(try bytes.uint32(start + 16)) : 0
            colours = size >= 36 ? Int(try bytes.uint32(start + 32)) : 0
            if size == 64 || (size < 40 && size != 16), compression != 0 {
                throw bytes.corrupt("OS/2 2.x compression \(compression) is not read")  // its 3 and 4 mean other things
            }
            if compression == 3 || compression == 6 {
                if size >= 52 {
                    for index in 0..<(size >= 56 ? 4 : 3) { masks[index] = try bytes.uint32(start + 40 + 4 * index) }
                } else {
                    let count = compression == 6 ? 4 : 3  // after a 40-byte header
                    for index in 0..<count { masks[index] = try bytes.uint32(start + size + 4 * index) }
                    paletteStart += 4 * count
                }
            }
        default:
            throw bytes.corrupt("a bitmap header of \(size) bytes is not one BMP has")
        }
        guard width > 0, height != 0, height != Int(Int32.min) else {
            throw bytes.corrupt("a bitmap of \(width)x\(height) pixels")
        }
        let topDown = height < 0
        height = abs(height)
        if icon {
            height /= 2
            guard height > 0 else { throw bytes.corrupt("an icon of height 0") }
        }
        guard [1, 2, 4, 8, 16, 24, 32].contains(bitsPerPixel) else {
            throw bytes.corrupt("\(bitsPerPixel) bits per pixel")
        }
        switch (compression, bitsPerPixel) {
        case (0, _), (1, 8), (2, 4), (3, 16), (3, 32), (6, 16), (6, 32): break
        case (4, _), (5, _): throw bytes.corrupt("a BMP holding a JPEG or PNG is not read")
        default: throw bytes.corrupt("compression \(compression) with \(bitsPerPixel) bits per pixel")
        }
        if topDown, compression == 1 || compression == 2 {
            throw bytes.corrupt("a run-length encoded bitmap cannot be top-down")
        }
        if compression == 0 {
            if bitsPerPixel == 16 { masks = [0x7C00, 0x03E0, 0x001F, 0] }
            if bitsPerPixel == 32 { masks = [0x00FF_0000, 0x0000_FF00, 0x0000_00FF, 0xFF00_0000] }
        }
        var palette: [(UInt8, UInt8, UInt8)] = []
        if bitsPerPixel <= 8 {
            let most = 1 << bitsPerPixel
            var count = colours > 0 ? min(colours, most) : most
            if let pixelOffset, pixelOffset > paletteStart {
                count = min(count, (pixelOffset - paletteStart) / entrySize)
            }
            try bytes.require(paletteStart, count * entrySize, "palette")
            palette = (0..<count).map { index in
                let entry = paletteStart + index * entrySize
                return (bytes.buffer[entry + 2], bytes.buffer[entry + 1], bytes.buffer[entry])
            }
        }
        let header = BMP.Header(
            width: width, height: height, bitsPerPixel: bitsPerPixel, mayHaveAlpha: bitsPerPixel >= 16 && masks[3] != 0
        )
        return DIB(
            header: header, compression: compression, topDown: topDown, masks: masks, palette: palette,
            end: paletteStart + palette.count * entrySize
        )
    }

    /// Refuses a bitmap over `maximumPixels` (before any buffer for its pixels exists).
    func check(maximumPixels: Int) throws {
        let (pixels, overflow) = header.width.multipliedReportingOverflow(by: header.height)
        guard !overflow, pixels <= maximumPixels else {
            throw ImageDecodingError.tooManyPixels(width: header.width, height: header.height, limit: maximumPixels)
        }
    }

    /// Bytes in one stored row of `bits`-per-pixel pixels (rows are padded to 4 bytes).
    static func stride(width: Int, bits: Int) -> Int { (width * bits + 31) / 32 * 4 }

    /// The pixels stored from `offset`: uncompressed or run-length encoded; `iconMask`: followed by
    /// ICO's 1-bit AND mask (transparent where set, unless 32-bit pixels carry alpha of their own).
    func pixels(_ bytes: Bytes, at offset: Int, iconMask: Bool) throws -> RGBA {
        let (width, height) = (header.width, header.height)
        var output = RGBA(width: width, height: height)
        switch compression {
        case 1, 2: try decodeRunLength(bytes, at: offset, into: &output)
        default: try decodeRows(bytes, at: offset, into: &output)
        }
        if iconMask, !(header.bitsPerPixel == 32 && output.hasAlpha) {
            let stride = Self.stride(width: width, bits: 1)
            let start = offset + Self.stride(width: width, bits: header.bitsPerPixel) * height
            if (try? bytes.require(start, stride * height, "mask")) != nil {  // an icon without its mask: opaque
                for row in 0..<height {
                    let y = topDown ? row : height - 1 - row
                    let line = start + row * stride
                    for x in 0..<width where bytes.buffer[line + x >> 3] & (0x80 >> UInt8(x & 7)) != 0 {
                        output.pixels[(y * width + x) * 4 + 3] = 0
                    }
                }
                output.hasAlpha = true
            }
        }
        return output
    }

    private func colour(_ index: Int) -> (UInt8, UInt8, UInt8) {
        index < palette.count ? palette[index] : (0, 0, 0)  // an index past the palette: black, as browsers draw it
    }

    private func decodeRows(_ bytes: Bytes, at offset: Int, into output: inout RGBA) throws {
        let (width, height, bits) = (header.width, header.height, header.bitsPerPixel)
        let stride = Self.stride(width: width, bits: bits)
        let (size, overflow) = stride.multipliedReportingOverflow(by: height)
        guard !overflow else { throw bytes.corrupt("pixel data too large") }
        try bytes.require(offset, size, "pixels (\(size) bytes from offset \(offset))")
        let channels = masks.map(MaskChannel.init)
        let buffer = bytes.buffer
        var alphaSeen = false
        output.pixels.withUnsafeMutableBufferPointer { pixels in
            for row in 0..<height {
                let y = topDown ? row : height - 1 - row
                let line = offset + row * stride
                var target = y * width * 4
                for x in 0..<width {
                    var (red, green, blue, alpha): (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 255)
                    switch bits {
                    case 1, 2, 4, 8:
                        let bit = x * bits
                        let byte = Int(buffer[line + bit >> 3])
                        let index = byte >> (8 - bits - (bit & 7)) & ((1 << bits) - 1)
                        (red, green, blue) = colour(index)
                    case 24:
                        let source = line + 3 * x
                        (red, green, blue) = (buffer[source + 2], buffer[source + 1], buffer[source])
                    default:  // 16 or 32, through the masks
                        let source = line + x * bits / 8
                        let value =
                            bits == 16
                            ? UInt32(buffer[source]) | UInt32(buffer[source + 1]) << 8
                            : UInt32(buffer[source]) | UInt32(buffer[source + 1]) << 8 | UInt32(buffer[source + 2])
                                << 16 | UInt32(buffer[source + 3]) << 24
                        (red, green, blue) = (
                            channels[0].value(value), channels[1].value(value), channels[2].value(value)
                        )
                        if channels[3].maximum > 0 {
                            alpha = channels[3].value(value)
                            if alpha != 0 { alphaSeen = true }
                        }
                    }
                    pixels[target] = red
                    pixels[target + 1] = green
                    pixels[target + 2] = blue
                    pixels[target + 3] = alpha
                    target += 4
                }
            }
            // Alpha that is 0 everywhere is a byte writers left empty, not a transparent picture.
            if header.mayHaveAlpha, !alphaSeen {
                for index in Swift.stride(from: 3, to: pixels.count, by: 4) { pixels[index] = 255 }
            }
        }
        output.hasAlpha = header.mayHaveAlpha && alphaSeen
    }

    /// RLE8 and RLE4: runs of one index, literal runs (padded to 2 bytes), end of line, end of bitmap,
    /// and jumps; pixels no run reaches stay transparent (as browsers leave them).
    private func decodeRunLength(_ bytes: Bytes, at offset: Int, into output: inout RGBA) throws {
        let (width, height) = (header.width, header.height)
        let four = compression == 2
        var (x, row, position) = (0, 0, offset)
        var skipped = false
        func put(_ index: Int) {
            guard x < width, row < height else { return }
            let target = ((height - 1 - row) * width + x) * 4
            let (red, green, blue) = colour(index)
            output.pixels[target] = red
            output.pixels[target + 1] = green
            output.pixels[target + 2] = blue
            output.pixels[target + 3] = 255
        }
        decoding: while row < height {
            let count = Int(try bytes.uint8(position))
            let value = Int(try bytes.uint8(position + 1))
            position += 2
            if count > 0 {  // a run of one index (RLE4: two alternating)
                for step in 0..<count {
                    put(four ? (step % 2 == 0 ? value >> 4 : value & 0x0F) : value)
                    x += 1
                }
                continue
            }
            switch value {
            case 0:  // end of line
                if x < width { skipped = true }
                (x, row) = (0, row + 1)
            case 1:  // end of bitmap
                if row < height - 1 || x < width { skipped = true }
                break decoding
            case 2:  // jump right and up
                let (dx, dy) = (Int(try bytes.uint8(position)), Int(try bytes.uint8(position + 1)))
                position += 2
                (x, row) = (x + dx, row + dy)
                skipped = true
            default:  // a literal run of `value` indices
                let length = four ? (value + 1) / 2 : value
                try bytes.require(position, length, "run of pixels")
                for step in 0..<value {
                    let byte = Int(bytes.buffer[position + (four ? step / 2 : step)])
                    put(four ? (step % 2 == 0 ? byte >> 4 : byte & 0x0F) : byte)
                    x += 1
                }
                position += length + (length & 1)
            }
        }
        output.hasAlpha = skipped
    }
}

/// One colour of a bit-field pixel: its bits, scaled to 8.
struct MaskChannel {
    let mask: UInt32
    let shift: UInt32
    /// The largest value the mask holds once shifted (0: the channel is absent).
    let maximum: UInt32

    init(_ mask: UInt32) {
        self.mask = mask
        shift = mask == 0 ? 0 : UInt32(mask.trailingZeroBitCount)
        maximum = mask >> shift
    }

    func value(_ pixel: UInt32) -> UInt8 {
        guard maximum > 0 else { return 0 }
        let value = UInt64((pixel & mask) >> shift)  // at most `maximum`
        return maximum == 255 ? UInt8(value) : UInt8((value * 255 + UInt64(maximum / 2)) / UInt64(maximum))
    }
}

/// Decoded pixels as RGBA, before they are made the smallest ``Image`` that holds them.
struct RGBA {
    let width: Int
    let height: Int
    var pixels: [UInt8]
    var hasAlpha = false

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        pixels = [UInt8](repeating: 0, count: width * height * 4)
    }

    /// The pixels as grey when every pixel is grey, without alpha when every pixel is opaque.
    func image(width: Int, height: Int, format: ImageFormat) -> Image {
        var grey = true
        var opaque = true
        for index in Swift.stride(from: 0, to: pixels.count, by: 4) {
            if grey, pixels[index] != pixels[index + 1] || pixels[index] != pixels[index + 2] { grey = false }
            if opaque, pixels[index + 3] != 255 { opaque = false }
            if !grey, !opaque { break }
        }
        let pixelFormat = PixelFormat(channels: (grey ? 1 : 3) + (opaque ? 0 : 1))!
        var data = Data(capacity: width * height * pixelFormat.bytesPerPixel)
        if pixelFormat == .rgba8 {
            data.append(contentsOf: pixels)
        } else {
            for index in Swift.stride(from: 0, to: pixels.count, by: 4) {
                data.append(pixels[index])
                if !grey { data.append(contentsOf: [pixels[index + 1], pixels[index + 2]]) }
                if !opaque { data.append(pixels[index + 3]) }
            }
        }
        return Image(width: width, height: height, pixelFormat: pixelFormat, pixels: data, sourceFormat: format)
    }
}
