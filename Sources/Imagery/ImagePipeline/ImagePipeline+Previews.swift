import Foundation

extension ImagePipeline {
    /// Whether downloads hand their bodies over as they arrive: the pipeline makes previews
    /// (``Configuration/progressivePreviews``) and its decoder can (``ProgressiveDecoding``).
    var makesPreviews: Bool {
        configuration.progressivePreviews != nil && configuration.decoder is any ProgressiveDecoding
    }

    /// The previews of an image job for `request`; `nil` when the pipeline makes none, or the source
    /// is not downloaded by the data loader (a custom data source comes at once).
    func previewScheduler(for request: ImageRequest, job: JobContext) -> PreviewScheduler? {
        guard let policy = configuration.progressivePreviews,
            let decoder = configuration.decoder as? any ProgressiveDecoding,
            case .url = request.source
        else { return nil }
        let priority = job.priority
        return PreviewScheduler(
            decoder: decoder, recipe: request.recipe, minimumInterval: policy.minimumInterval,
            time: configuration.time, budget: configuration.memoryBudget,
            run: { [self] work in try await decodePreview(priority: priority, work) },
            isWanted: job.wantsPartialResults,
            deliver: { job.reportPartial(.preview($0)) }
        )
    }

    /// Runs a preview's decode on a decode thread at the job's priority, recording it
    /// (``ImagePipelineEvent/previewDecoded(duration:width:height:)``).
    private func decodePreview(priority: PriorityCell, _ work: @escaping @Sendable () throws -> Image) async throws
        -> Image
    {
        let (result, duration) = try await decodingPool.run(isUrgent: isUrgent(priority)) {
            () -> (Result<Image, any Error>, Duration) in
            let start = ContinuousClock.now
            let result = Result { try work() }
            return (result, ContinuousClock.now - start)
        }
        let image = try result.get()
        record(.previewDecoded(duration: duration, width: image.width, height: image.height))
        return image
    }
}
