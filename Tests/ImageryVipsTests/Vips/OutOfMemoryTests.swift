import CGIFFrames
import Imagery
import Testing

@testable import ImageryVips

/// A failed allocation is reported as what it is, not as a corrupt source: the bytes may be fine and
/// the same decode may succeed later (the server answers 503 with Retry-After, not 422).
@Suite("Out of memory")
struct OutOfMemoryTests {
    @Test func libvipsAndLibjpegMessagesOfFailedAllocationsAreOutOfMemory() {
        for message in [
            "vips__malloc: out of memory --- size == 2048MB", "Out of memory", "Insufficient memory (case 4)",
        ] {
            #expect(VipsError(message: message).decodingError(format: .jpeg) == .outOfMemory(reason: message))
        }
        let broken = "VipsJpeg: Premature end of JPEG file"
        #expect(VipsError(message: broken).decodingError(format: .jpeg) == .corrupt(format: .jpeg, reason: broken))
        // What the caller knows wins over the text.
        #expect(
            VipsError(message: "out of memory, says the file's comment", outOfMemory: false).decodingError(format: .png)
                == .corrupt(format: .png, reason: "out of memory, says the file's comment"))
        #expect(
            VipsError(message: "frame", outOfMemory: true).decodingError(format: .gif) == .outOfMemory(reason: "frame"))
    }

    @Test func theAreaResizeTellsAFailedAllocationFromABadSize() {
        var source: [UInt8] = [1, 2, 3, 4]
        var output: [UInt8] = [0]
        // A size out of range: -1.
        #expect(imagery_area_resize(&source, 2, 2, 2, 1, &output, 3, 1) == -1)
        // Buffers larger than size_t counts (no allocation is tried, so sanitizers' allocators are not
        // asked either): -2, not a wrapped-around small buffer; nothing is read from the tiny source or written.
        #expect(imagery_area_resize(&source, Int32.max, Int32.max, Int(Int32.max) * 4, 4, &output, Int32.max, 1) == -2)
        #expect(output == [0])
        // And a real shrink still works: the mean of four pixels.
        #expect(imagery_area_resize(&source, 2, 2, 2, 1, &output, 1, 1) == 0)
        #expect(output == [3])  // (1 + 2 + 3 + 4) / 4 = 2.5, rounded half up
    }
}
