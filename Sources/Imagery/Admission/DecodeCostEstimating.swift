import Foundation

/// A decoder that can tell from an image's header, without decoding it, how much memory
/// decoding it will hold at its peak: what ``MemoryBudget`` charges a decode before it starts.
public protocol DecodeCostEstimating: Sendable {
    /// The bytes decoding `data` with `recipe` holds at its peak: pixels at the scale it
    /// decodes at, the decoder's working buffers, the result. An estimate, erring high.
    /// - Throws: ``ImageDecodingError`` when the header cannot be read (the decode would fail too).
    func estimatedDecodeMemory(_ data: Data, recipe: ImageRecipe) throws -> Int
}
