import Foundation
import Imagery
import ImageryDiskCache
import ImageryHTTP
import ImageryVips
import ThumbnailRoutes
import Vapor

/// `IMAGES_URL=https://images.example.com/photos/ swift run VaporApp serve --port 8082`, then
/// `curl -H 'Accept: image/webp' http://127.0.0.1:8082/thumbnails/cat.jpg?w=256`.
@main
struct VaporApp {
    static func main() async throws {
        var environment = try Environment.detect()
        try LoggingSystem.bootstrap(from: &environment)
        let app = try await Application.make(environment)
        guard let sources = Environment.get("IMAGES_URL").flatMap(URL.init(string:)) else {
            app.logger.error(
                "set IMAGES_URL to the folder URL the images are under (https://images.example.com/photos/)")
            try await app.asyncShutdown()
            return
        }
        // Vapor's HTTP client and event loops load the sources: Imagery never shuts the client down.
        let loader = HTTPDataLoader(client: app.http.client.shared)
        let disk = try DiskCache(
            directory: URL(fileURLWithPath: Environment.get("CACHE_DIR") ?? ".thumbnail-cache"), sizeLimit: 1 << 30)
        var configuration = ImagePipeline.Configuration(decoder: VipsImageDecoder(), dataLoader: loader)
        configuration.diskCache = disk
        configuration.encoder = VipsImageEncoder()
        configuration.storesThumbnailsOnDisk = false  // the encoded thumbnails are what is stored
        let pipeline = ImagePipeline(configuration: configuration)
        Thumbnails(pipeline: pipeline, sources: sources).register(on: app)
        do {
            try await app.execute()
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
        // The server has stopped: the pipeline's stores finish and the disk cache is flushed.
        await pipeline.finishStoring()
        try await app.asyncShutdown()
    }
}
