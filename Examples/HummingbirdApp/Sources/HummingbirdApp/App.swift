import Foundation
import Hummingbird
import Imagery
import ImageryDiskCache
import ImageryHTTP
import ImageryLifecycle
import ImageryVips
import ThumbnailService

/// `IMAGES_URL=https://images.example.com/photos/ swift run HummingbirdApp`, then
/// `curl -H 'Accept: image/avif' http://127.0.0.1:8081/thumbnails/cat.jpg?w=256`.
@main
struct HummingbirdApp {
    static func main() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let sources = environment["IMAGES_URL"].flatMap(URL.init(string:)) else {
            print("set IMAGES_URL to the folder URL the images are under (https://images.example.com/photos/)")
            return
        }
        let loader = HTTPDataLoader()
        let disk = try DiskCache(
            directory: URL(fileURLWithPath: environment["CACHE_DIR"] ?? ".thumbnail-cache"), sizeLimit: 1 << 30)
        var configuration = ImagePipeline.Configuration(decoder: VipsImageDecoder(), dataLoader: loader)
        configuration.diskCache = disk
        configuration.encoder = VipsImageEncoder()
        configuration.storesThumbnailsOnDisk = false  // the encoded thumbnails are what is stored
        let pipeline = ImagePipeline(configuration: configuration)

        let router = Router()
        Thumbnails(pipeline: pipeline, sources: sources).add(to: router)
        var app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 8081)))
        // On SIGTERM or SIGINT: the server stops, then the pipeline's stores finish, the disk cache is
        // flushed, and the loader shuts down (services stop in the reverse of their order here).
        app.addServices(loader, disk, ImagePipelineService(pipeline))
        try await app.runService()
    }
}
