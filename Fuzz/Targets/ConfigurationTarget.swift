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
            configuration.limits.inflightMemory > 0
                && configuration.limits.inflightMemory < configuration.limits.memoryLimit,
            "in-flight budget")
        try require(configuration.limits.cacheMemory > 0, "no memory for the caches")
        try require(configuration.limits.residentCeiling > configuration.limits.memoryLimit, "resident ceiling")
        _ = MemoryBudget(
            configuration: MemoryBudget.Configuration(
                limit: configuration.limits.inflightMemory,
                maximumQueueLength: configuration.limits.admissionQueueLength,
                maximumWait: configuration.limits.admissionTimeout ?? configuration.limits.requestTimeout
            ))
        if let directory = configuration.caching.directory {
            _ = DiskCache.Configuration(directory: directory, sizeLimit: configuration.caching.diskLimit)
        }
        for url in configuration.gallery.urls {
            try require(
                ServerConfiguration.sourceURL(url.absoluteString) != nil, "gallery URL \(url) is not a source URL")
        }
    }
}
