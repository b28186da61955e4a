import Foundation

/// A handle on one image load: watch its phase and events, change its
/// priority while it runs, cancel it, await its image.
///
/// Tasks for the same image share their work (``ImagePipeline`` coalesces them);
/// cancelling one task leaves the others' results intact, and cancelling the
/// last one cancels the shared work and its download.
public final class ImageTask: Sendable {
    /// How far a load has got; what a UI binds to.
    public enum Phase: Sendable {
        /// Loading; the progress of the download so far.
        case loading(TransferProgress)
        /// Done: the image.
        case success(Image)
        /// Failed or cancelled (`CancellationError`).
        case failure(any Error)
    }

    /// What happens to a task, in order: progress updates, retries and previews, then one completion.
    public enum Event: Sendable {
        /// More bytes arrived.
        case progress(TransferProgress)
        /// A load of the source failed and is tried again after ``RetryPolicy/Retry/delay``
        /// (the pipeline's ``ImagePipeline/Configuration/retryPolicy``).
        case retrying(RetryPolicy.Retry)
        /// A preview of the image while it downloads: a progressive JPEG's scans so far, at the
        /// request's size, each in more detail than the last; never after the completion. Only for
        /// requests with ``ImageRequest/Options/progressivePreviews`` through a pipeline that makes
        /// them (``ImagePipeline/Configuration/progressivePreviews``).
        case preview(Image)
        /// The task ended with an image or an error.
        case completed(Result<Image, any Error>)
    }

    private struct State {
        var phase: Phase = .loading(TransferProgress(completed: 0, total: nil))
        var task: Task<Image, any Error>?
        var preview: Image?
        var subscribers: [Int: AsyncStream<Event>.Continuation] = [:]
        var nextSubscriber = 0
    }

    /// The request this task loads.
    public let request: ImageRequest
    let priorityCell: PriorityCell
    private let state = Locked(State())

    init(request: ImageRequest) {
        self.request = request
        self.priorityCell = PriorityCell(request.priority)
    }

    /// The load's callbacks to the task: updates (progress, retries) and previews.
    struct Reporting: Sendable {
        let updates: @Sendable (JobUpdate) -> Void
        let preview: @Sendable (Image) -> Void
    }

    /// Starts the load; called once, before the task is handed out.
    func start(_ load: @escaping @Sendable (PriorityCell, Reporting) async throws -> Image) {
        let task = Task { [self] in
            do {
                let reporting = Reporting(
                    updates: { [weak self] in self?.didUpdate($0) },
                    preview: { [weak self] in self?.didPreview($0) }
                )
                let image = try await load(priorityCell, reporting)
                didComplete(.success(image))
                return image
            } catch {
                didComplete(.failure(error))
                throw error
            }
        }
        state.withLock { $0.task = task }
    }

    /// The task's priority. Raising it while the task waits for a download slot
    /// moves it ahead; the shared work runs at the highest priority of its tasks.
    public var priority: ImageRequest.Priority {
        get { priorityCell.value }
        set { priorityCell.value = newValue }
    }

    /// The current phase.
    public var phase: Phase { state.withLock { $0.phase } }

    /// The latest preview (``Event/preview(_:)``) while the task loads; `nil` before the first, and
    /// once the task has ended (its phase then holds the image).
    public var preview: Image? { state.withLock { $0.preview } }

    /// A new stream of this task's events from now on; a stream made after the
    /// task ended yields only its completion. Each call makes an independent stream.
    public var events: AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self)
        let ended: Phase? = state.withLock { state in
            switch state.phase {
            case .loading:
                let id = state.nextSubscriber
                state.nextSubscriber += 1
                state.subscribers[id] = continuation
                continuation.onTermination = { [weak self] _ in
                    _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
                }
                return nil
            case .success, .failure:
                return state.phase
            }
        }
        switch ended {
        case .success(let image)?:
            continuation.yield(.completed(.success(image)))
            continuation.finish()
        case .failure(let error)?:
            continuation.yield(.completed(.failure(error)))
            continuation.finish()
        case .loading?, nil:
            break
        }
        return stream
    }

    /// The image, once loaded. Cancelling the awaiting task cancels this image task.
    /// - Throws: The load's error, or `CancellationError`.
    public var image: Image {
        get async throws {
            guard let task = state.withLock({ $0.task }) else { throw CancellationError() }
            return try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
        }
    }

    /// Cancels the load. Work shared with other tasks goes on for them.
    public func cancel() {
        state.withLock { $0.task }?.cancel()
    }

    private func didUpdate(_ update: JobUpdate) {
        let event: Event
        switch update {
        case .progress(let progress): event = .progress(progress)
        case .retrying(let retry): event = .retrying(retry)
        }
        let subscribers = state.withLock { state -> [AsyncStream<Event>.Continuation] in
            guard case .loading = state.phase else { return [] }
            if case .progress(let progress) = update { state.phase = .loading(progress) }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.yield(event) }
    }

    private func didPreview(_ image: Image) {
        let subscribers = state.withLock { state -> [AsyncStream<Event>.Continuation] in
            guard case .loading = state.phase else { return [] }
            state.preview = image
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.yield(.preview(image)) }
    }

    private func didComplete(_ result: Result<Image, any Error>) {
        let subscribers = state.withLock { state -> [AsyncStream<Event>.Continuation] in
            state.preview = nil
            switch result {
            case .success(let image): state.phase = .success(image)
            case .failure(let error): state.phase = .failure(error)
            }
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers {
            subscriber.yield(.completed(result))
            subscriber.finish()
        }
    }
}

extension ImageTask: Hashable {
    public static func == (lhs: ImageTask, rhs: ImageTask) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
