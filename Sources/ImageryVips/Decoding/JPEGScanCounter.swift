import Foundation
import Imagery

/// Counts the complete scans of a progressive JPEG as its bytes arrive (``ScanCounting``), reading
/// each byte once: markers and segment lengths up to each scan, then a search for the marker that
/// ends the scan's entropy-coded data (the first 0xFF not followed by a stuffed zero or a restart
/// marker, fill bytes allowed, as libjpeg reads it).
///
/// A scan is complete once the marker after its data has arrived; the bytes before that marker
/// are what a preview decodes (libjpeg then meets the end of the data where the next scan would
/// begin, and decodes the scans so far). It says `nil` (no previews) for a JPEG that is not
/// progressive (SOF2 or SOF10), for bytes it does not follow (no SOI, garbage between segments, a
/// scan before the frame header, a marker libjpeg refuses), and at the EOI marker: the last scan
/// complete is the whole image, which the final decode shows.
struct JPEGScanCounter: ScanCounting {
    /// Where reading goes on.
    private var offset = 0
    /// Whether `offset` is inside a scan's entropy-coded data (else at a marker).
    private var inScan = false
    private var progressive = false
    private var completed = CompletedScans(count: 0, byteCount: 0)
    private var ended = false

    mutating func count(_ data: Data) -> CompletedScans? {
        guard !ended else { return nil }
        data.withUnsafeBytes { read($0) }
        return ended ? nil : completed
    }

    /// Reads from `offset` as far as `bytes` allows, stopping at an incomplete segment or marker.
    private mutating func read(_ bytes: UnsafeRawBufferPointer) {
        let count = bytes.count
        if offset == 0 {
            guard count >= 2 else { return }
            guard bytes[0] == 0xFF, bytes[1] == 0xD8 else { return end() }
            offset = 2
        }
        while !ended {
            if inScan {
                guard let marker = scanEnd(bytes) else { return }
                inScan = false
                guard bytes[markerCode(bytes, at: marker)] != 0xD9 else { return end() }  // EOI: the whole image
                completed = CompletedScans(count: completed.count + 1, byteCount: marker)
                offset = marker
            }
            guard offset < count else { return }
            guard bytes[offset] == 0xFF else { return end() }  // garbage between segments: libjpeg warns
            let codeAt = markerCode(bytes, at: offset)
            guard codeAt < count else { return }
            let code = bytes[codeAt]
            switch code {
            case 0xD9, 0x00, 0xD8: return end()  // EOI before the last scan's data, or markers libjpeg refuses here
            case 0xD0...0xD7, 0x01:  // RSTn, TEM: no length
                offset = codeAt + 1
                continue
            default: break
            }
            guard count - codeAt >= 3 else { return }
            let length = Int(bytes[codeAt + 1]) << 8 | Int(bytes[codeAt + 2])
            guard length >= 2 else { return end() }
            let segmentEnd = codeAt + 1 + length
            guard segmentEnd <= count else { return }  // the rest of the segment is still to come
            if (0xC0...0xCF).contains(code), code != 0xC4, code != 0xC8, code != 0xCC {  // SOFn
                guard code == 0xC2 || code == 0xCA else { return end() }  // baseline, lossless, hierarchical
                progressive = true
            } else if code == 0xDA {  // SOS
                guard progressive else { return end() }
                inScan = true
            }
            offset = segmentEnd
        }
    }

    /// The offset of the marker (its first 0xFF, fill bytes included) that ends the entropy-coded
    /// data read from `offset` on; `nil` when the data so far ends first (`offset` then moves to
    /// where the search goes on: a trailing run of 0xFF is read again with the byte after it).
    private mutating func scanEnd(_ bytes: UnsafeRawBufferPointer) -> Int? {
        let count = bytes.count
        var position = offset
        while position < count {
            guard let base = bytes.baseAddress,
                let found = memchr(base + position, 0xFF, count - position)
            else { break }
            let marker = base.distance(to: UnsafeRawPointer(found))
            let code = markerCode(bytes, at: marker)
            guard code < count else {
                offset = marker
                return nil
            }
            if bytes[code] != 0x00, !(0xD0...0xD7).contains(bytes[code]) { return marker }
            position = code + 1  // a stuffed 0xFF data byte or RSTn: still in the scan
        }
        offset = count
        return nil
    }

    /// The offset of the code of the marker whose first 0xFF is at `offset`, past fill bytes
    /// (`bytes.count` when the data ends first).
    private func markerCode(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int {
        var code = offset + 1
        while code < bytes.count, bytes[code] == 0xFF { code += 1 }
        return code
    }

    private mutating func end() {
        ended = true
    }
}
