import Foundation

/// Whether this process runs in a network namespace whose only interface is loopback
/// (`scripts/test-support/loopback-only` runs a command so): where a test may name addresses of other
/// hosts, because nothing it sends, even by mistake, can leave the machine.
package enum LoopbackOnlyNetwork {
    /// The interfaces of this process's network namespace (`/proc/self/net/dev`, which, unlike
    /// `/sys/class/net`, is the namespace's own), by name.
    package static var interfaces: [String] {
        guard let text = try? String(contentsOfFile: "/proc/self/net/dev", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").dropFirst(2).compactMap { line in
            line.split(separator: ":").first.map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    /// True when loopback is the only interface.
    package static var isActive: Bool { interfaces == ["lo"] }
}
