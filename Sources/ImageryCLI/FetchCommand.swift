import ArgumentParser
import Foundation
import Imagery
import ImageryDiskCache
import ImageryHTTP
import ImageryVips

/// `imagery fetch URL --width W --height H --fit cover --output FILE`
struct FetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract:
            "Load an image (http, https, file URL or a path), decode it, optionally at a thumbnail size, and write it to a file."
    )

    @Argument(help: "An http(s) URL, a file URL, or a path to a local file.")
    var source: String

    @Option(help: "Thumbnail width in pixels (needs --height).")
    var width: Int?

    @Option(help: "Thumbnail height in pixels (needs --width).")
    var height: Int?

    @Option(help: "How the image fits the thumbnail box: cover, contain, fill or inside.")
    var fit: ImageRequest.Thumbnail.Fit = .cover

    @Option(name: .shortAndLong, help: "The file to write; its extension picks the format (png, jpg, webp, avif, gif).")
    var output: String

    @Option(help: "Quality for lossy output formats, 1-100.")
    var quality: Int?

    @Option(help: "The disk cache directory (default: $XDG_CACHE_HOME/imagery or ~/.cache/imagery).")
    var cacheDir: String?

    @Flag(help: "Do not use the disk cache.")
    var noCache = false

    func validate() throws {
        if (width == nil) != (height == nil) { throw ValidationError("give both --width and --height, or neither") }
        if let width, let height, width < 1 || height < 1 || width > 16_384 || height > 16_384 {
            throw ValidationError("--width and --height must be between 1 and 16384")
        }
        if let quality, !(1...100).contains(quality) { throw ValidationError("--quality must be between 1 and 100") }
        let outputExtension = URL(fileURLWithPath: output).pathExtension
        if ImageFormat(fileExtension: outputExtension) == nil {
            throw ValidationError(
                "cannot tell the output format from '\(output)': end it in .png, .jpg, .webp, .avif or .gif")
        }
    }

    func run() async throws {
        let url = try sourceURL()
        let format = ImageFormat(fileExtension: URL(fileURLWithPath: output).pathExtension) ?? .png
        let thumbnail = width.flatMap { width in
            height.map { ImageRequest.Thumbnail(width: width, height: $0, fit: fit) }
        }
        let loader = HTTPDataLoader()
        var configuration = ImagePipeline.Configuration(decoder: VipsImageDecoder(), dataLoader: loader)
        var disk: DiskCache?
        if !noCache {
            let directory = cacheDir.map { URL(fileURLWithPath: $0) } ?? DiskCache.Configuration.defaultDirectory
            do {
                disk = try DiskCache(directory: directory)
            } catch {
                throw CommandFailure(message: "\(error) (use --no-cache to run without it)")
            }
            configuration.diskCache = disk
            configuration.encoder = VipsImageEncoder()
        }
        let pipeline = ImagePipeline(configuration: configuration)
        let request = ImageRequest(url: url, thumbnail: thumbnail)
        let clock = ContinuousClock()
        do {
            let start = clock.now
            let data = try await pipeline.data(for: request)
            let loaded = clock.now
            let image = try await pipeline.image(for: request)
            let decoded = clock.now
            let encoded = try VipsImageEncoder().encode(image, as: format, quality: quality)
            try encoded.write(to: URL(fileURLWithPath: output), options: .atomic)
            let written = clock.now
            await pipeline.finishStoring()
            try await loader.shutdown()
            print(
                """
                loaded  \(data.count) bytes in \(milliseconds(loaded - start))
                decoded \(image.width)x\(image.height) \(image.pixelFormat) from \(image.sourceFormat)\
                \(thumbnail.map { " at \($0)" } ?? "") in \(milliseconds(decoded - loaded))
                wrote   \(output) (\(format.rawValue), \(encoded.count) bytes) in \(milliseconds(written - decoded))
                total   \(milliseconds(written - start))
                """)
        } catch {
            try? await loader.shutdown()
            throw CommandFailure(message: "\(error)")
        }
    }

    private func sourceURL() throws -> URL {
        if let url = URL(string: source), let scheme = url.scheme,
            ["http", "https", "file"].contains(scheme.lowercased())
        {
            return url
        }
        if source.contains("://") {
            throw ValidationError("unsupported URL '\(source)': use http, https, file or a path")
        }
        return URL(fileURLWithPath: source)
    }

    private func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return String(format: "%.1f ms", Double(seconds) * 1000 + Double(attoseconds) / 1e15)
    }
}

extension ImageRequest.Thumbnail.Fit: ExpressibleByArgument {}

/// A failure to report as `Error: message` with exit status 1 (no usage text).
struct CommandFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
