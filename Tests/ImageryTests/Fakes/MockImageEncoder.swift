import Foundation

@testable import Imagery

/// An ``ImageEncoding`` that writes ``TestImage`` bytes (size, tag and the format asked for), counting
/// its encodes: what the pipeline stores on disk as a thumbnail variant.
final class MockImageEncoder: ImageEncoding {
    /// The format of each encode, in order.
    let encodes = EventLog<ImageFormat>()
    private let failure = Locked<(any Error)?>(nil)

    init() {}

    /// Every encode from now on throws `error` (`nil`: none does).
    func fail(with error: (any Error)?) {
        failure.withLock { $0 = error }
    }

    func encode(_ image: Image, as format: ImageFormat, options: EncodingOptions) throws -> Data {
        encodes.append(format)
        if let error = failure.withLock({ $0 }) { throw error }
        return TestImage.data(width: image.width, height: image.height, tag: image.testTag, format: format)
    }
}
