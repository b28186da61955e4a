import ArgumentParser
import Foundation
@testable import ImageryCLI
import Testing

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
        // Checked by the command: the message names the option.
        WrongValue("--memory-limit", "lots", says: "--memory-limit takes a byte count such as 268435456 or 256M"),
        WrongValue("--memory-limit", "-1", says: "Missing value for '--memory-limit <memory-limit>'"),
        WrongValue("--memory-limit=-1", says: "--memory-limit takes a byte count such as 268435456 or 256M"),
        WrongValue("--max-inflight-memory", "0", says: "--max-inflight-memory takes a byte count such as 134217728 or 128M"),
        WrongValue("--max-inflight-memory", "600M", says: "--max-inflight-memory must be less than --memory-limit (the caches get the rest)"),
        WrongValue("--admission-queue=-1", says: "--admission-queue cannot be negative"),
        WrongValue("--admission-timeout=-1", says: "--admission-timeout takes a number of seconds from 0 to a year"),
        WrongValue("--admission-timeout", "inf", says: "--admission-timeout takes a number of seconds from 0 to a year"),
        WrongValue("--idle-timeout", "0", says: "--idle-timeout takes a positive number of seconds, at most a year"),
        WrongValue("--idle-timeout", "40000000", says: "--idle-timeout takes a positive number of seconds, at most a year"),
        WrongValue("--request-timeout", "0", says: "--request-timeout takes a positive number of seconds, at most a year"),
        WrongValue("--max-connections", "0", says: "--max-connections must be positive"),
        WrongValue("--disk-limit", "2T", says: "--disk-limit takes a byte count such as 2147483648 or 2G"),
        WrongValue("--gallery-dir", "/no/such/directory", says: "--gallery-dir /no/such/directory is not a directory"),
        WrongValue("--gallery-url", "ftp://example.com/a.jpg", says: "--gallery-url ftp://example.com/a.jpg is not an absolute http or https URL"),
        WrongValue("--preset", "thumb", says: "--preset takes NAME=QUERY, such as thumb='w=200&h=200&format=webp'"),
        WrongValue("--preset", "=w=1", says: "--preset takes NAME=QUERY, such as thumb='w=200&h=200&format=webp'"),
        WrongValue("--watermark", "logo.png", says: "--watermark takes NAME=FILE, such as logo=/etc/imagery/logo.png"),
        WrongValue("--s3-endpoint", "ftp://store", says: "--s3-endpoint takes an http or https URL, such as http://127.0.0.1:8333"),
        WrongValue("--thumbor-config", "/no/such.conf", says: "the thumbor configuration /no/such.conf cannot be read (or is not UTF-8 text)"),
        WrongValue("--config", "/no/such.json", says: "cannot read the configuration file /no/such.json"),
        // Read by ArgumentParser: its message names the option.
        WrongValue("--port", "http", says: "The value 'http' is invalid for '--port <port>'"),
        WrongValue("--log-format", "xml", says: "The value 'xml' is invalid for '--log-format <log-format>'. Please provide one of 'text' and 'json'."),
        WrongValue("--no-such-option", says: "Unknown option '--no-such-option'"),
        WrongValue("--host", says: "Missing value for '--host <host>'"),
    ]

    @Test(arguments: wrongValues)
    func aWrongValueIsToldByTheOptionsName(_ wrong: WrongValue) {
        #expect(Self.errorMessage(wrong.arguments) == wrong.message)
    }

    /// Checked with the whole configuration (``ServerConfiguration/validate()``, shared with `--config`'s
    /// file): the message names the setting by its configuration key, which is the option's name in
    /// camel case (`port` for `--port`, `signingKey` for `--signing-key`).
    @Test(arguments: [
        (["--port", "70000"], "port must be from 0 to 65535"),
        (["--memory-limit", "512K"], "memoryLimit must be from 1 MiB to 1 PiB"),
        (["--signing-key", ""], "signingKey cannot be empty (leave it out to turn signing off)"),
        (["--thumbor-key", ""], "thumborSecurityKey cannot be empty (leave it out for /unsafe/ URLs)"),
        (["--s3-bucket", "images"], "s3Bucket and s3SourceBuckets need s3Endpoint (the store to use)"),
        (["--only-presets"], "onlyPresets needs at least one preset"),
        (["--cluster-instance", "a:1"], "clusterSelf and clusterInstances go together: this instance's HOST:PORT, one of clusterInstances"),
        (["--cluster-instance", "a:1", "--cluster-self", "b:2"], "clusterSelf and clusterInstances go together: this instance's HOST:PORT, one of clusterInstances"),
        (["--cluster-instance", "nohost", "--cluster-self", "nohost"], "clusterInstances must be HOST:PORT addresses, such as 10.0.0.11:8080"),
    ] as [([String], String)])
    func aValueTheWholeConfigurationRefusesIsToldByItsKey(_ arguments: [String], _ message: String) {
        #expect(Self.errorMessage(arguments) == message)
    }

    @Test func imgproxyKeysThatAreNotHexAreRefused() throws {
        let message = try #require(Self.errorMessage(["--imgproxy-key", "zz", "--imgproxy-salt", "aa"]))
        #expect(message.hasPrefix("imgproxyKeys and imgproxySalts must be hex"))
    }
}
