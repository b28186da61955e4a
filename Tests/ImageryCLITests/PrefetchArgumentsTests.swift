import ArgumentParser
import Imagery
import Testing

@testable import ImageryCLI

/// `imagery prefetch`'s arguments (the command itself runs as a process in ImageryServerTests).
@Suite struct PrefetchArgumentsTests {
    static func parse(_ arguments: [String]) throws -> PrefetchCommand {
        guard let command = try ImageryCommand.parseAsRoot(["prefetch"] + arguments) as? PrefetchCommand else {
            throw ParseTestError.otherCommand
        }
        return command
    }

    @Test func defaults() throws {
        let command = try Self.parse(["urls.txt"])
        #expect(command.file == "urls.txt" && command.sizes == nil && command.concurrency == 4)
        #expect(command.cacheDir == nil && command.diskLimit == 1024)
        #expect(try command.thumbnails() == [nil])
    }

    @Test func everyOption() throws {
        let command = try Self.parse([
            "-", "--sizes", "256x256", "--concurrency", "8", "--cache-dir", "/tmp/c", "--disk-limit", "64",
        ])
        #expect(
            command.file == "-" && command.concurrency == 8 && command.cacheDir == "/tmp/c" && command.diskLimit == 64)
        #expect(try command.thumbnails() == [ImageRequest.Thumbnail(width: 256, height: 256)])
    }

    /// A side of 0 follows the aspect ratio: a box unbounded that way, fitted inside.
    @Test func sizesWithASideOfZeroFitInside() throws {
        let command = try Self.parse(["-", "--sizes", "1024x0,0x300,64X64"])
        #expect(
            try command.thumbnails() == [
                ImageRequest.Thumbnail(width: 1024, height: 16_384, fit: .inside),
                ImageRequest.Thumbnail(width: 16_384, height: 300, fit: .inside),
                ImageRequest.Thumbnail(width: 64, height: 64),
            ])
    }

    @Test(
        arguments: [
            (["-", "--concurrency", "0"], "--concurrency must be between 1 and 64"),
            (["-", "--concurrency", "65"], "--concurrency must be between 1 and 64"),
            (["-", "--disk-limit", "0"], "--disk-limit must be positive"),
            (["-", "--sizes", "0x0"], "--sizes takes WIDTHxHEIGHT values (0 to 16384, not both 0), not '0x0'"),
            (["-", "--sizes", "256"], "--sizes takes WIDTHxHEIGHT values (0 to 16384, not both 0), not '256'"),
            (["-", "--sizes", "256x256,axb"], "--sizes takes WIDTHxHEIGHT values (0 to 16384, not both 0), not 'axb'"),
            (["-", "--sizes", "16385x1"], "--sizes takes WIDTHxHEIGHT values (0 to 16384, not both 0), not '16385x1'"),
            (["-", "--sizes", "1x2x3"], "--sizes takes WIDTHxHEIGHT values (0 to 16384, not both 0), not '1x2x3'"),
            ([], "Missing expected argument '<file>'"),
        ] as [([String], String)])
    func aWrongArgumentIsToldByItsName(_ arguments: [String], _ message: String) {
        #expect(parseError(["prefetch"] + arguments) == message)
    }
}
