import Foundation

extension ImagePipeline {
    /// How a pipeline makes previews while progressive images download
    /// (``Configuration/progressivePreviews``).
    ///
    /// While a progressive JPEG downloads for a request with ``ImageRequest/Options/progressivePreviews``,
    /// the pipeline decodes the scans that have arrived, at the request's size and with its recipe,
    /// and its ``ImageTask`` reports each such image (``ImageTask/Event/preview(_:)``):
    /// - at most one per scan completed, and no more often than ``minimumInterval``; one with the
    ///   pixels of the last one (scans of detail finer than the request's size) is not reported;
    /// - never after the final image, and never stored in any cache;
    /// - each decoded on the pipeline's decode threads, charged to its ``Configuration/memoryBudget``
    ///   (a preview that does not fit at once, or whose turn comes while the previous one still
    ///   decodes, is skipped: previews never wait in line);
    /// - cancelled with the load (a preview's decode never outlives it).
    ///
    /// A baseline JPEG, and any other format, gives none. The decoder must be ``ProgressiveDecoding``
    /// (`VipsImageDecoder` is) and the data loader must hand over the body as it arrives
    /// (``DataRequest/didReceiveBody``: `HTTPDataLoader` does; files and custom data sources, read at
    /// once, give none).
    public struct ProgressivePreviews: Sendable, Hashable {
        /// The least time between two previews of one load, on ``Configuration/time``; default 100 ms.
        /// The first comes as soon as a scan is complete.
        public var minimumInterval: Duration

        /// Previews at most every `minimumInterval` (default 100 ms).
        public init(minimumInterval: Duration = .milliseconds(100)) {
            self.minimumInterval = minimumInterval
        }
    }
}
