import ArgumentParser
import ImageryServer
import Testing

@testable import ImageryCLI

/// `imagery cache`'s arguments, and the byte counts its options and `serve`'s take and print.
@Suite struct CacheCommandTests {
    @Test func subcommandsAndTheirOptions() throws {
        let stats = try #require(try ImageryCommand.parseAsRoot(["cache", "stats"]) as? CacheCommand.Stats)
        #expect(stats.location.cacheDir == nil)
        let clear = try #require(
            try ImageryCommand.parseAsRoot(["cache", "clear", "--cache-dir", "/tmp/c"]) as? CacheCommand.Clear)
        #expect(clear.location.cacheDir == "/tmp/c")
        let trim = try #require(
            try ImageryCommand.parseAsRoot(["cache", "trim", "--size", "500M", "--cache-dir", "/tmp/c"])
                as? CacheCommand.Trim)
        #expect(trim.size == "500M" && trim.location.cacheDir == "/tmp/c")
    }

    @Test(
        arguments: [
            (["cache", "trim"], "Missing expected argument '--size <size>'"),
            (["cache", "prune"], "Unexpected argument 'prune'"),
        ] as [([String], String)])
    func aWrongArgumentIsTold(_ arguments: [String], _ message: String) {
        #expect(parseError(arguments) == message)
    }

    @Test(
        arguments: [
            ("1048576", 1_048_576), ("0", 0), ("500K", 500 << 10), ("500k", 500 << 10), ("500M", 500 << 20),
            ("2G", 2 << 30),
            ("1.5G", 3 << 29), (" 2g ", 2 << 30),
        ] as [(String, Int)])
    func byteCountsAreRead(_ text: String, _ bytes: Int) {
        #expect(SettingText.byteCount(text) == bytes)
    }

    @Test(arguments: ["", "lots", "-1", "-1M", "2T", "1.5", "M", "1 G"])
    func whatIsNotAByteCountIsNil(_ text: String) {
        #expect(SettingText.byteCount(text) == nil)
    }

    @Test(
        arguments: [
            (0, "0 bytes"), (1023, "1023 bytes"), (1024, "1.0 KiB"), (1536, "1.5 KiB"), (5 << 20, "5.0 MiB"),
            (1 << 30, "1.0 GiB"), (3 << 40, "3.0 TiB"),
            (1 << 52, "4096.0 TiB"),
        ] as [(Int, String)])
    func byteCountsAreWrittenInBinaryUnits(_ bytes: Int, _ text: String) {
        #expect(formatBytes(bytes) == text)
    }
}
