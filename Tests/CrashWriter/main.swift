// Writes disk-cache entries in a loop until it is killed: the crash-recovery
// tests SIGKILL it at random moments and check what survives.
// Usage: ImageryCrashWriter DIRECTORY FIRST-INDEX SIZE-LIMIT
import Foundation
import Imagery
import ImageryDiskCache
import ImageryTestSupport

let arguments = CommandLine.arguments
guard arguments.count == 4, let first = Int(arguments[2]), let limit = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: ImageryCrashWriter DIRECTORY FIRST-INDEX SIZE-LIMIT\n".utf8))
    exit(2)
}
/// Writes a line to stdout unbuffered, so the parent sees it before the kill.
func report(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let cache = try DiskCache(directory: URL(fileURLWithPath: arguments[1]), sizeLimit: limit)
report("open \(cache.count)")
var index = first
while true {
    await cache.store(
        CrashPayload.bytes(for: index), for: CrashPayload.key(for: index),
        metadata: CacheMetadata(contentType: "application/x-test"))
    if index % 8 == 0 {
        await cache.flush()
        report("stored \(index)")
    }
    index += 1
}
