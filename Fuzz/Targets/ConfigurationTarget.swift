import Foundation
import Imagery
import ImageryDiskCache
import ImageryServer

/// The JSON configuration file: any bytes are either refused with a message that names the
/// file, or a configuration whose values the server can compute with.
enum ConfigurationTarget {
    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        let configuration: ServerConfiguration
        do {
            configuration = try ServerConfiguration(json: Data(bytes), name: "fuzz.json")
        } catch {
            try require(error.message.contains("fuzz.json"), "an error that does not name the file: \(error.message)")
            return
        }
        do {
            try configuration.validate()
        } catch {
            throw FuzzFailure("an accepted configuration does not validate: \(error.message)")
        }
        // What the server derives from it (the budget, the cache shares, the ceiling) is in range.
        try require(
            configuration.inflightMemory > 0 && configuration.inflightMemory < configuration.memoryLimit,
            "in-flight budget")
        try require(configuration.cacheMemory > 0, "no memory for the caches")
        try require(configuration.residentCeiling > configuration.memoryLimit, "resident ceiling")
        _ = MemoryBudget(
            configuration: MemoryBudget.Configuration(
                limit: configuration.inflightMemory, maximumQueueLength: configuration.admissionQueueLength,
                maximumWait: configuration.admissionTimeout ?? configuration.requestTimeout
            ))
        if let directory = configuration.cacheDirectory {
            _ = DiskCache.Configuration(directory: directory, sizeLimit: configuration.diskLimit)
        }
        for url in configuration.galleryURLs {
            try require(
                ServerConfiguration.sourceURL(url.absoluteString) != nil, "gallery URL \(url) is not a source URL")
        }
    }
}
