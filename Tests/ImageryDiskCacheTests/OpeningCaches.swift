import Foundation
import ImageryDiskCache
import ImageryTestSupport

/// A cache on `directory` opened as a test opens one: an earlier cache on it that the test has let go
/// of is waited for up to the hang guard (``DiskCache/Configuration/lockWait``), however long its last
/// reference takes to be released on a loaded machine.
func openCache(_ directory: URL, sizeLimit: Int = 1 << 30) throws -> DiskCache {
    try DiskCache(configuration: .patient(directory, sizeLimit: sizeLimit))
}

extension DiskCache.Configuration {
    /// A configuration for `directory` whose open waits for an earlier holder up to the hang guard.
    static func patient(_ directory: URL, sizeLimit: Int = 1 << 30, ttl: TimeInterval? = nil) -> Self {
        var configuration = DiskCache.Configuration(directory: directory, sizeLimit: sizeLimit, ttl: ttl)
        configuration.lockWait = hangGuard
        return configuration
    }
}

/// Waits until no cache holds `directory` (its lock can be taken), for a test about to hand the
/// directory to another process, whose open would otherwise wait only ``DiskCache/Configuration/lockWait``'s
/// default for a cache this process has let go of but not yet released.
func waitUntilNoCacheHolds(_ directory: URL) async throws {
    let path = directory.appendingPathComponent("lock").path
    try await waitUntil("no cache holds \(directory.path)") {
        let descriptor = open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { return errno == ENOENT }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return false }
        flock(descriptor, LOCK_UN)
        return true
    }
}
