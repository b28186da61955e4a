import ArgumentParser
import Foundation
import Testing

@testable import ImageryCLI

/// What `imagery serve` tells a user whose value is wrong: the message names what to fix.
extension ServeCommandTests {
    /// Arguments, and the message the user reads (`Error: ` and it).
    struct WrongValue: Sendable, CustomTestStringConvertible {
        let arguments: [String]
        let message: String
        var testDescription: String { arguments.joined(separator: " ") }

        init(_ arguments: String..., says message: String) {
            (self.arguments, self.message) = (arguments, message)
        }
    }

    static let wrongValues: [WrongValue] = [
        // Read through the configuration layers: the message names the key, the option and where it was given.
        WrongValue(
            "--memory-limit", "lots",
            says:
                "limits.memoryLimit (--memory-limit, command line): takes a byte count such as 268435456 or 256M, not 'lots'"
        ),
        WrongValue("--memory-limit", "-1", says: "Missing value for '--memory-limit <memory-limit>'"),
        WrongValue(
            "--memory-limit=-1",
            says:
                "limits.memoryLimit (--memory-limit, command line): takes a byte count such as 268435456 or 256M, not '-1'"
        ),
        WrongValue(
            "--max-inflight-memory", "0",
            says:
                "limits.maximumInflightMemory (--max-inflight-memory, command line): must be positive and less than limits.memoryLimit (the caches get the rest)"
        ),
        WrongValue(
            "--max-inflight-memory", "600M",
            says:
                "limits.maximumInflightMemory (--max-inflight-memory, command line): must be positive and less than limits.memoryLimit (the caches get the rest)"
        ),
        WrongValue(
            "--admission-queue=-1",
            says: "limits.admissionQueueLength (--admission-queue, command line): must be from 0 to 1048576"),
        WrongValue(
            "--admission-timeout=-1",
            says:
                "limits.admissionTimeoutSeconds (--admission-timeout, command line): takes a number of seconds from 0 to a year, not '-1.0'"
        ),
        WrongValue(
            "--admission-timeout", "inf",
            says:
                "limits.admissionTimeoutSeconds (--admission-timeout, command line): takes a number of seconds from 0 to a year, not 'inf'"
        ),
        WrongValue(
            "--idle-timeout", "0",
            says: "listener.idleTimeoutSeconds (--idle-timeout, command line): must be more than 0 and at most a year"),
        WrongValue(
            "--idle-timeout", "40000000",
            says:
                "listener.idleTimeoutSeconds (--idle-timeout, command line): takes a number of seconds from 0 to a year, not '40000000.0'"
        ),
        WrongValue(
            "--request-timeout", "0",
            says:
                "limits.requestTimeoutSeconds (--request-timeout, command line): must be more than 0 and at most a year"
        ),
        WrongValue(
            "--max-connections", "0",
            says: "listener.maximumConnections (--max-connections, command line): must be from 1 to 1048576"),
        WrongValue(
            "--disk-limit", "2P",
            says:
                "caching.diskLimit (--disk-limit, command line): takes a byte count such as 268435456 or 256M, not '2P'"
        ),
        WrongValue(
            "--gallery-dir", "/no/such/directory",
            says: "gallery.directory (--gallery-dir, command line): /no/such/directory is not a directory"),
        WrongValue(
            "--gallery-url", "ftp://example.com/a.jpg",
            says:
                "gallery.urls (--gallery-url, command line): ftp://example.com/a.jpg is not an absolute http or https URL"
        ),
        WrongValue(
            "--preset", "thumb", says: "requests.presets (--preset, command line): takes NAME=VALUE items, not 'thumb'"),
        WrongValue(
            "--preset", "=w=1", says: "requests.presets (--preset, command line): takes NAME=VALUE items, not '=w=1'"),
        WrongValue(
            "--watermark", "logo.png",
            says: "rendering.watermarkFiles (--watermark, command line): takes NAME=VALUE items, not 'logo.png'"),
        WrongValue(
            "--s3-endpoint", "ftp://store",
            says:
                "s3.endpoint (--s3-endpoint, command line): takes an http or https URL with a host, such as http://127.0.0.1:8333, not 'ftp://store'"
        ),
        WrongValue(
            "--thumbor-config", "/no/such.conf",
            says: "the thumbor configuration /no/such.conf cannot be read (or is not UTF-8 text)"),
        WrongValue("--config", "/no/such.json", says: "cannot read the configuration file /no/such.json"),
        // Read by ArgumentParser: its message names the option.
        WrongValue("--port", "http", says: "The value 'http' is invalid for '--port <port>'"),
        WrongValue(
            "--log-format", "xml",
            says: "The value 'xml' is invalid for '--log-format <log-format>'. Please provide one of 'text' and 'json'."
        ),
        WrongValue("--no-such-option", says: "Unknown option '--no-such-option'"),
        WrongValue("--host", says: "Missing value for '--host <host>'"),
    ]

    @Test(arguments: wrongValues)
    func aWrongValueIsToldByTheOptionsName(_ wrong: WrongValue) {
        #expect(Self.errorMessage(wrong.arguments) == wrong.message)
    }

    /// Checked with the whole configuration (``ServerConfiguration/validate()``, shared with `--config`'s
    /// file): the message names the setting by its key, and the option that gave the value (a rule
    /// between two settings names the key it is about).
    @Test(
        arguments: [
            (["--port", "70000"], "listener.port (--port, command line): must be from 0 to 65535"),
            (
                ["--memory-limit", "512K"],
                "limits.memoryLimit (--memory-limit, command line): must be from 1 MiB to 1 PiB"
            ),
            (
                ["--signing-key", ""],
                "requests.signingKey (--signing-key, command line): cannot be empty (leave it out to turn signing off)"
            ),
            (
                ["--thumbor-key", ""],
                "thumbor.securityKey (--thumbor-key, command line): cannot be empty (leave it out for /unsafe/ URLs)"
            ),
            (
                ["--s3-bucket", "images"],
                "s3.endpoint: s3.bucket and s3.sourceBuckets need s3.endpoint (the store to use)"
            ),
            (["--only-presets"], "requests.onlyPresets (--only-presets, command line): needs at least one preset"),
            (
                ["--cluster-instance", "a:1"],
                "cluster.self: cluster.self and cluster.instances go together: this instance's HOST:PORT, one of cluster.instances"
            ),
            (
                ["--cluster-instance", "a:1", "--cluster-self", "b:2"],
                "cluster.self (--cluster-self, command line): cluster.self and cluster.instances go together: this instance's HOST:PORT, one of cluster.instances"
            ),
            (
                ["--cluster-instance", "nohost", "--cluster-self", "nohost"],
                "cluster.instances (--cluster-instance, command line): must be HOST:PORT addresses, such as 10.0.0.11:8080"
            ),
        ] as [([String], String)])
    func aValueTheWholeConfigurationRefusesIsToldByItsKey(_ arguments: [String], _ message: String) {
        #expect(Self.errorMessage(arguments) == message)
    }

    @Test func imgproxyKeysThatAreNotHexAreRefused() throws {
        let message = try #require(Self.errorMessage(["--imgproxy-key", "zz", "--imgproxy-salt", "aa"]))
        #expect(
            message.hasPrefix(
                "imgproxy.keys (--imgproxy-key, command line): imgproxy.keys and imgproxy.salts must be hex"))
    }
}
