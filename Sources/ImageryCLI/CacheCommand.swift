import ArgumentParser
import Foundation
import ImageryDiskCache
import ImageryServer

/// `imagery cache stats|trim|clear [--cache-dir DIR]`
struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect and manage the disk cache.",
        subcommands: [Stats.self, Trim.self, Clear.self]
    )

    struct Location: ParsableArguments {
        @Option(help: "The cache directory (default: $XDG_CACHE_HOME/imagery or ~/.cache/imagery).")
        var cacheDir: String?

        func open() throws -> DiskCache {
            let directory = cacheDir.map { URL(fileURLWithPath: $0) } ?? DiskCache.Configuration.defaultDirectory
            do {
                // No size limit on open: trimming is the user's call here, not a side effect of looking.
                return try DiskCache(configuration: .init(directory: directory, sizeLimit: .max))
            } catch {
                throw CommandFailure(message: "\(error)")
            }
        }
    }

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the number of entries and their total size.")
        @OptionGroup var location: Location

        func run() async throws {
            let cache = try location.open()
            print("directory  \(cache.configuration.directory.path)")
            print("entries    \(cache.count)")
            print("size       \(formatBytes(cache.totalSize))")
            if cache.stats.recoveredAtOpen > 0 {
                print("repaired   \(cache.stats.recoveredAtOpen) leftovers of an interrupted run")
            }
        }
    }

    struct Trim: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Evict least recently used entries down to a size.")
        @OptionGroup var location: Location
        @Option(help: "The size to trim to: bytes, or with a K, M or G suffix (e.g. 500M).")
        var size: String

        func run() async throws {
            guard let bytes = SettingText.byteCount(size) else {
                throw ValidationError("--size takes a byte count such as 1048576, 500M or 2G")
            }
            let cache = try location.open()
            let before = (cache.count, cache.totalSize)
            await cache.trim(toSize: bytes)
            await cache.flush()
            print(
                "trimmed \(before.0 - cache.count) entries, \(formatBytes(before.1 - cache.totalSize)); now \(cache.count) entries, \(formatBytes(cache.totalSize))"
            )
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove every entry.")
        @OptionGroup var location: Location

        func run() async throws {
            let cache = try location.open()
            let count = cache.count
            await cache.removeAll()
            print("removed \(count) entries")
        }
    }
}

func formatBytes(_ bytes: Int) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
    var value = Double(bytes)
    var unit = 0
    while value >= 1024, unit < units.count - 1 {
        value /= 1024
        unit += 1
    }
    return unit == 0 ? "\(bytes) bytes" : String(format: "%.1f %@", value, units[unit])
}
