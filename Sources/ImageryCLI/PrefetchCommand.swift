import ArgumentParser
import Dispatch
import Foundation
import Imagery
import ImageryDiskCache
import ImageryHTTP
import ImageryVips
import Synchronization

/// `imagery prefetch FILE|- [--sizes 256x256,1024x0] [--concurrency N] [--cache-dir DIR]`
struct PrefetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefetch",
        abstract: "Load a list of image URLs (one a line) into the disk cache that fetch and serve use.",
        discussion: """
            Without --sizes the originals are downloaded into the disk cache (nothing is decoded); with
            --sizes each image is also decoded at those sizes and the thumbnails stored. Entries fresh in the
            cache already are not downloaded again. A progress bar is shown on a terminal, plain lines
            otherwise. Exits 1 when some image failed (listed by reason), 130 when interrupted (Ctrl-C:
            what was stored stays usable).
            """
    )

    @Argument(
        help: "A file of URLs, one a line (blank lines and lines starting with # are skipped), or - for standard input."
    )
    var file: String

    @Option(help: "Thumbnail sizes to make of each image, WIDTHxHEIGHT, comma-separated (0 follows the aspect ratio).")
    var sizes: String?

    @Option(help: "How many images load at once.")
    var concurrency = 4

    @Option(help: "The disk cache directory (default: $XDG_CACHE_HOME/imagery or ~/.cache/imagery).")
    var cacheDir: String?

    @Option(help: "The disk cache's size limit in MiB.")
    var diskLimit = 1024

    func validate() throws {
        guard (1...64).contains(concurrency) else { throw ValidationError("--concurrency must be between 1 and 64") }
        guard diskLimit > 0 else { throw ValidationError("--disk-limit must be positive") }
        _ = try thumbnails()
    }

    /// The thumbnail boxes of `--sizes`; `[nil]` without it (the original only).
    func thumbnails() throws -> [ImageRequest.Thumbnail?] {
        guard let sizes else { return [nil] }
        return try sizes.split(separator: ",").map { size in
            let sides = size.lowercased().split(separator: "x", omittingEmptySubsequences: false).map { Int($0) }
            guard sides.count == 2, let width = sides[0], let height = sides[1], (0...16_384).contains(width),
                (0...16_384).contains(height), width + height > 0
            else { throw ValidationError("--sizes takes WIDTHxHEIGHT values (0 to 16384, not both 0), not '\(size)'") }
            // A side of 0 follows the aspect ratio: fit inside a box unbounded that way.
            if width == 0 || height == 0 {
                return .init(width: width == 0 ? 16_384 : width, height: height == 0 ? 16_384 : height, fit: .inside)
            }
            return .init(width: width, height: height)
        }
    }

    func run() async throws {
        let lines = try readLines()
        let thumbnails = try thumbnails()
        var invalid: [String] = []
        var requests: [ImageRequest] = []
        for line in lines {
            guard let url = URL(string: line), let scheme = url.scheme?.lowercased(),
                ["http", "https"].contains(scheme), url.host != nil
            else {
                invalid.append(line)
                continue
            }
            requests += thumbnails.map { ImageRequest(url: url, thumbnail: $0, priority: .normal) }
        }

        let directory = cacheDir.map { URL(fileURLWithPath: $0) } ?? DiskCache.Configuration.defaultDirectory
        let disk: DiskCache
        do {
            disk = try DiskCache(directory: directory, sizeLimit: diskLimit << 20)
        } catch {
            throw CommandFailure(message: "\(error)")
        }
        var loaderConfiguration = HTTPDataLoader.Configuration()
        loaderConfiguration.resumableData = ResumableData(memoryLimit: 0, disk: disk)  // an interrupted run resumes
        let loader = HTTPDataLoader(configuration: loaderConfiguration)
        let transfers = TransferCounter()
        var configuration = ImagePipeline.Configuration(decoder: VipsImageDecoder(), dataLoader: loader)
        configuration.diskCache = disk
        configuration.encoder = VipsImageEncoder()
        configuration.imageCache = nil  // thumbnails go to disk; none is shown
        configuration.baseImageCacheCostLimit = 64 << 20
        configuration.maximumConcurrentDownloads = concurrency
        configuration.observer = transfers
        let pipeline = ImagePipeline(configuration: configuration)

        let failures = FailureList()
        let prefetcher = ImagePrefetcher(
            pipeline: pipeline, destination: sizes == nil ? .diskCache : .memoryCache, priority: .normal,
            maximumConcurrentRequests: concurrency
        ) { request, result in
            if case .failure(let error) = result { failures.add(request, error) }
        }
        let interrupted = Interruption { prefetcher.stopPrefetching() }
        let display = ProgressDisplay(total: requests.count, terminal: isatty(STDERR_FILENO) == 1)
        let clock = ContinuousClock()
        let start = clock.now
        prefetcher.startPrefetching(with: requests)
        let ticker = Task {
            while !Task.isCancelled {
                display.show(prefetcher.progress, bytes: transfers.bytes, elapsed: clock.now - start)
                try? await Task.sleep(for: .milliseconds(display.terminal ? 200 : 5000))
            }
        }
        await prefetcher.waitUntilIdle()
        ticker.cancel()
        interrupted.cancel()
        let progress = prefetcher.progress
        display.finish(progress, bytes: transfers.bytes, elapsed: clock.now - start)
        await pipeline.finishStoring()
        try? await loader.shutdown()

        let sizesNote =
            thumbnails.count > 1 || sizes != nil ? " × \(thumbnails.count) size\(thumbnails.count == 1 ? "" : "s")" : ""
        print(
            """
            prefetched \(progress.completed) of \(requests.count) (\(requests.count / thumbnails.count) URLs\(sizesNote)), \
            \(progress.failed + invalid.count) failed; \(transfers.downloads) downloads, \(ByteCount(transfers.bytes)) \
            in \(Seconds(clock.now - start))
            cache \(directory.path): \(disk.count) entries, \(ByteCount(disk.totalSize))
            """)
        failures.report(invalid: invalid)
        if interrupted.happened {
            print("interrupted: \(requests.count - progress.completed - progress.failed) not prefetched")
            throw ExitCode(130)
        }
        if progress.failed + invalid.count > 0 { throw ExitCode(1) }
    }

    private func readLines() throws -> [String] {
        let text: String
        if file == "-" {
            text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        } else {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw CommandFailure(message: "cannot read \(file)")
            }
            text = String(decoding: data, as: UTF8.self)
        }
        return text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }
}

/// Counts the bytes and downloads of a pipeline (its observer).
final class TransferCounter: ImagePipelineObserver {
    private let counts = Mutex((bytes: 0, downloads: 0))
    var bytes: Int { counts.withLock { $0.bytes } }
    var downloads: Int { counts.withLock { $0.downloads } }

    func pipeline(_ pipeline: ImagePipeline, didRecord event: ImagePipelineEvent) {
        if case .fetched(_, let bytes, let notModified) = event {
            counts.withLock {
                $0.bytes += bytes
                if !notModified { $0.downloads += 1 }
            }
        }
    }
}

/// The failed requests, grouped by reason for the summary.
final class FailureList: Sendable {
    private let failures = Mutex<[String: [String]]>([:])

    func add(_ request: ImageRequest, _ error: any Error) {
        let url = if case .url(let url) = request.source { url.absoluteString } else { "\(request.sourceKey)" }
        let size = request.thumbnail.map { " at \($0)" } ?? ""
        failures.withLock { $0[String(describing: error), default: []].append(url + size) }
    }

    /// Prints each reason with its count and URLs (at most 10 each), most frequent first.
    func report(invalid: [String]) {
        var groups = failures.withLock { $0 }
        if !invalid.isEmpty { groups["not an http(s) URL", default: []] += invalid }
        for (reason, urls) in groups.sorted(by: {
            $0.value.count > $1.value.count || ($0.value.count == $1.value.count && $0.key < $1.key)
        }) {
            print("failed (\(urls.count)): \(reason)")
            for url in urls.prefix(10) { print("  \(url)") }
            if urls.count > 10 { print("  ... and \(urls.count - 10) more") }
        }
    }
}

/// Runs `stop` on the first SIGINT; a second one ends the process at once.
final class Interruption {
    private let source: any DispatchSourceSignal
    private let flag = SignalFlag()

    init(stop: @escaping @Sendable () -> Void) {
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        let flag = flag
        source.setEventHandler {
            if flag.setFirst() {
                FileHandle.standardError.write(
                    Data(
                        "\nstopping: the loads under way are cancelled, what is stored stays (Ctrl-C again to quit at once)\n"
                            .utf8))
                stop()
            } else {
                exit(130)
            }
        }
        source.resume()
    }

    var happened: Bool { flag.isSet }

    func cancel() {
        source.cancel()
        signal(SIGINT, SIG_DFL)
    }
}

/// A flag set once, from any thread.
final class SignalFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    /// Sets it; whether this call was the first.
    func setFirst() -> Bool { !value.exchange(true, ordering: .acquiringAndReleasing) }
}
