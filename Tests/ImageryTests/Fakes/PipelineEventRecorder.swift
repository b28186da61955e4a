import Foundation

@testable import Imagery

/// An ``ImagePipelineObserver`` that keeps every event, in order, for a test to count or await.
final class PipelineEventRecorder: ImagePipelineObserver {
    let events = EventLog<ImagePipelineEvent>()

    init() {}

    func pipeline(_ pipeline: ImagePipeline, didRecord event: ImagePipelineEvent) {
        events.append(event)
    }

    var all: [ImagePipelineEvent] { events.all }

    /// The outcome of each lookup of `tier`, in order (`true`: a hit).
    func lookups(_ tier: ImagePipelineEvent.CacheTier) -> [Bool] {
        all.compactMap { if case .cacheLookup(tier, let hit) = $0 { hit } else { nil } }
    }

    func hits(_ tier: ImagePipelineEvent.CacheTier) -> Int { lookups(tier).filter { $0 }.count }
    func misses(_ tier: ImagePipelineEvent.CacheTier) -> Int { lookups(tier).filter { !$0 }.count }

    /// Each fetch from the source: the bytes received and whether it was a 304.
    var fetches: [(bytes: Int, notModified: Bool)] {
        all.compactMap { if case .fetched(_, let bytes, let notModified) = $0 { (bytes, notModified) } else { nil } }
    }

    var fetchFailures: Int { all.filter { if case .fetchFailed = $0 { true } else { false } }.count }

    /// Each decode's output size.
    var decodes: [(width: Int, height: Int)] {
        all.compactMap { if case .decoded(_, let width, let height) = $0 { (width, height) } else { nil } }
    }

    var decodeFailures: Int { all.filter { if case .decodeFailed = $0 { true } else { false } }.count }

    /// Each preview's output size (``ImagePipeline/ProgressivePreviews``).
    var previewDecodes: [(width: Int, height: Int)] {
        all.compactMap { if case .previewDecoded(_, let width, let height) = $0 { (width, height) } else { nil } }
    }

    /// Each derivation's output size.
    var derivations: [(width: Int, height: Int)] {
        all.compactMap { if case .derived(_, let width, let height) = $0 { (width, height) } else { nil } }
    }
}
