import Foundation

@testable import Imagery

/// A ``MockImageDecoder`` that makes previews (``ProgressiveDecoding``) of ``TestImage/progressive(scans:tag:)``
/// bytes: each scan ends with a 0xFE byte, and a preview's pixels are the number of scans it holds
/// (so a test sees which scans each preview showed). Its previews' decodes are counted (each one's
/// start an event a test awaits) and can be held at a gate; final decodes are ``decoder``'s.
final class MockProgressiveDecoder: ProgressiveDecoding, DecodeCostEstimating {
    /// Counts the final decodes (and estimates their memory).
    let decoder = MockImageDecoder()
    /// The scans of each preview whose decode started, in order.
    let previews = EventLog<Int>()
    private let gate = Locked<BlockingGate?>(nil)
    private let pixels = Locked<@Sendable (Int) -> UInt8>({ UInt8($0) })

    init() {}

    /// Holds every preview's decode from now on at `gate` (on its decode thread) until it opens.
    func holdPreviews(at gate: BlockingGate?) {
        self.gate.withLock { $0 = gate }
    }

    /// The value of a preview's pixels for its number of scans from now on (default: that number), so
    /// that a test can make two previews look the same.
    func setPreviewPixels(_ value: @escaping @Sendable (Int) -> UInt8) {
        pixels.withLock { $0 = value }
    }

    func decode(_ data: Data, recipe: ImageRecipe) throws -> Image {
        try decoder.decode(data, recipe: recipe)
    }

    func estimatedDecodeMemory(_ data: Data, recipe: ImageRecipe) throws -> Int {
        try decoder.estimatedDecodeMemory(data, recipe: recipe)
    }

    func makeScanCounter() -> any ScanCounting {
        TestScanCounter()
    }

    func decodePreview(_ data: Data, recipe: ImageRecipe) throws -> Image {
        let scans = TestScanCounter.scans(in: data).count
        previews.append(scans)
        try gate.withLock { $0 }?.wait()
        let source = try TestImage.header(of: data)
        let size = TestImage.size(of: recipe, width: source.width, height: source.height)
        let tag = pixels.withLock { $0 }(scans)
        return TestImage.image(width: size.width, height: size.height, tag: tag, format: source.format)
    }
}

/// Reads ``TestImage/progressive(scans:width:height:tag:)`` bytes: `nil` for any other (a "baseline"
/// image), and at the end mark (as a JPEG's EOI: the whole image, no preview).
struct TestScanCounter: ScanCounting {
    mutating func count(_ data: Data) -> CompletedScans? {
        guard data.count > TestImage.headerSize else { return CompletedScans(count: 0, byteCount: 0) }
        guard data[data.startIndex + TestImage.headerSize] == TestImage.progressiveMark,
            data.last != TestImage.endMark
        else { return nil }
        return Self.scans(in: data)
    }

    static func scans(in data: Data) -> CompletedScans {
        let ends = data.indices.filter { data[$0] == TestImage.scanEnd }
        return CompletedScans(count: ends.count, byteCount: ends.last.map { $0 - data.startIndex + 1 } ?? 0)
    }
}

extension TestImage {
    static let progressiveMark: UInt8 = 0xFD
    static let scanEnd: UInt8 = 0xFE
    static let endMark: UInt8 = 0xFF
    static let scanSize = 100

    /// A "progressive" test image: the header, a mark, then `scans` scans of ``scanSize`` bytes, each
    /// ending with ``scanEnd``, then ``endMark``.
    static func progressive(scans: Int, width: Int = 64, height: Int = 48, tag: UInt8 = 1) -> Data {
        var data = TestImage.data(width: width, height: height, tag: tag)
        data.append(progressiveMark)
        for _ in 0..<scans {
            data.append(Data(repeating: 0xEE, count: scanSize - 1))
            data.append(scanEnd)
        }
        data.append(endMark)
        return data
    }

    /// Where the first `scans` scans of ``progressive(scans:width:height:tag:)`` end: chunk ends
    /// that complete one scan each (the chunk after the last one ends the body).
    static func scanEnds(scans: Int) -> [Int] {
        (1...scans).map { headerSize + 1 + $0 * scanSize }
    }
}
