/// The instances of a cluster on nginx's consistent-hash ring, so that an instance names the owner
/// of a source exactly as nginx's `hash $imagery_source consistent` does (`ngx_http_upstream_hash_module`:
/// ketama as Cache::Memcached::Fast computes it). Each instance `HOST:PORT` has 160 points, the CRC-32
/// of `HOST \0 PORT` followed by the previous point's value (4 bytes, little-endian; 0 for the first);
/// a key's CRC-32 goes to the first point at or after it, around the ring; on failure nginx tries the
/// next points' instances in turn (``owners(of:)``).
struct SourceRing: Sendable {
    /// `HOST:PORT` of each instance, as written in nginx's `server` lines.
    let instances: [String]
    private let points: [(hash: UInt32, instance: Int)]

    init(instances: [String]) {
        self.instances = instances
        var points: [(hash: UInt32, instance: Int)] = []
        for (index, instance) in instances.enumerated() {
            let (host, port) = Self.hostAndPort(instance)
            let base = CRC32.update(CRC32.update(CRC32.update(CRC32.initial, host), [0]), port)
            var previous: UInt32 = 0
            for _ in 0..<160 {
                let bytes = [
                    UInt8(previous & 0xFF), UInt8(previous >> 8 & 0xFF), UInt8(previous >> 16 & 0xFF),
                    UInt8(previous >> 24),
                ]
                previous = CRC32.final(CRC32.update(base, bytes))
                points.append((previous, index))
            }
        }
        // nginx sorts by hash and keeps the first of equal hashes.
        points.sort { $0.hash < $1.hash }
        var unique: [(hash: UInt32, instance: Int)] = []
        for point in points where unique.last?.hash != point.hash { unique.append(point) }
        self.points = unique
    }

    /// The instances in the order nginx tries them for `key`: its owner first, then the instances of
    /// the following points, each once.
    func owners(of key: some StringProtocol) -> [String] {
        guard !points.isEmpty else { return [] }
        let hash = CRC32.final(CRC32.update(CRC32.initial, Array(key.utf8)))
        var low = 0
        var high = points.count  // the first point >= hash
        while low < high {
            let middle = (low + high) / 2
            if points[middle].hash < hash { low = middle + 1 } else { high = middle }
        }
        var order: [String] = []
        var seen = Set<Int>()
        for step in 0..<points.count where seen.count < instances.count {
            let instance = points[(low + step) % points.count].instance
            if seen.insert(instance).inserted { order.append(instances[instance]) }
        }
        return order
    }

    /// nginx's split of a `server` name: the digits after the last `:` are the port; `unix:PATH` and a
    /// name without a port have none.
    static func hostAndPort(_ server: String) -> (host: [UInt8], port: [UInt8]) {
        let bytes = Array(server.utf8)
        if bytes.count >= 5, String(decoding: bytes[0..<5], as: UTF8.self).lowercased() == "unix:" {
            return (Array(bytes[5...]), [])
        }
        var index = bytes.count - 1
        while index >= 0, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index -= 1 }
        guard index >= 0, bytes[index] == UInt8(ascii: ":") else { return (bytes, []) }
        return (Array(bytes[..<index]), Array(bytes[(index + 1)...]))
    }
}
