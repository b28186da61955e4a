import Foundation

/// A decoder that can decode an image from the first part of its bytes, for previews while it
/// downloads: a progressive JPEG's first scans, each one a whole image in more detail than the last.
///
/// The pipeline feeds a ``ScanCounting`` reader the body as it arrives, and decodes a preview of
/// the scans complete so far (``decodePreview(_:recipe:)``) when one more has arrived
/// (``ImagePipeline/Configuration/progressivePreviews``).
public protocol ProgressiveDecoding: ImageDecoding {
    /// A new reader for one body, told its bytes as they arrive.
    func makeScanCounter() -> any ScanCounting

    /// Decodes the scans in `data` (the first ``CompletedScans/byteCount`` bytes of a body, as
    /// a ``ScanCounting`` reader said) made with `recipe`: the image a decode of the whole body
    /// gives (same size), in the detail of those scans. Damage the format's decoder reports is not
    /// an error here (the data is cut short on purpose), and the decoder's pixel limits hold.
    /// - Throws: As ``ImageDecoding/decode(_:recipe:)``.
    func decodePreview(_ data: Data, recipe: ImageRecipe) throws -> Image
}

/// Follows one body as it arrives and says how many of its scans (passes of the whole image)
/// are complete, and which bytes hold them.
public protocol ScanCounting: Sendable {
    /// Reads on in `data`, the body so far: every call gets a longer prefix of the same body (or the same one).
    /// - Returns: The scans complete in `data` (zero until the first is), or `nil` once the bytes show
    ///   there will be no previews of this body: not a progressive image (a baseline JPEG, another
    ///   format), bytes the reader does not follow, or the end of the image (the last scan is never
    ///   counted: complete, it is the whole image).
    /// - Complexity: O(*n*) in the bytes not yet read: what was read is not read again.
    mutating func count(_ data: Data) -> CompletedScans?
}

/// The scans complete in the first part of a body.
public struct CompletedScans: Sendable, Hashable {
    /// How many scans are complete.
    public var count: Int
    /// The bytes, from the start of the body, that hold them: what
    /// ``ProgressiveDecoding/decodePreview(_:recipe:)`` reads.
    public var byteCount: Int

    /// `count` scans in the first `byteCount` bytes.
    public init(count: Int, byteCount: Int) {
        self.count = count
        self.byteCount = byteCount
    }
}
