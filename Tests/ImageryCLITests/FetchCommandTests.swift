import ArgumentParser
import Imagery
import Testing

@testable import ImageryCLI

/// `imagery fetch`'s arguments: defaults, options, and what a user is told of a wrong one.
@Suite struct FetchCommandTests {
    static func parse(_ arguments: [String]) throws -> FetchCommand {
        guard let command = try ImageryCommand.parseAsRoot(["fetch"] + arguments) as? FetchCommand else {
            throw ParseTestError.otherCommand
        }
        return command
    }

    @Test func defaults() throws {
        let command = try Self.parse(["a.jpg", "-o", "b.png"])
        #expect(command.source == "a.jpg" && command.output == "b.png")
        #expect(command.width == nil && command.height == nil && command.fit == .cover)
        #expect(command.quality == nil && command.cacheDir == nil && !command.noCache)
    }

    @Test func everyOption() throws {
        let command = try Self.parse([
            "https://example.com/a.jpg", "--output", "b.webp", "--width", "300", "--height", "200", "--fit", "contain",
            "--quality", "80", "--cache-dir", "/tmp/c", "--no-cache",
        ])
        #expect(command.source == "https://example.com/a.jpg" && command.output == "b.webp")
        #expect(command.width == 300 && command.height == 200 && command.fit == .contain)
        #expect(command.quality == 80 && command.cacheDir == "/tmp/c" && command.noCache)
    }

    @Test(arguments: ImageRequest.Thumbnail.Fit.allCases)
    func everyFitIsParsed(_ fit: ImageRequest.Thumbnail.Fit) throws {
        #expect(
            try Self.parse(["a.jpg", "-o", "b.png", "--width", "1", "--height", "1", "--fit", fit.rawValue]).fit == fit)
    }

    @Test(arguments: ["png", "jpg", "jpeg", "webp", "avif", "gif"])
    func theOutputsExtensionPicksAFormat(_ fileExtension: String) throws {
        _ = try Self.parse(["a.jpg", "-o", "out." + fileExtension])
    }

    @Test(
        arguments: [
            (["a.jpg", "-o", "b.png", "--width", "10"], "give both --width and --height, or neither"),
            (["a.jpg", "-o", "b.png", "--height", "10"], "give both --width and --height, or neither"),
            (
                ["a.jpg", "-o", "b.png", "--width", "0", "--height", "10"],
                "--width and --height must be between 1 and 16384"
            ),
            (
                ["a.jpg", "-o", "b.png", "--width", "10", "--height", "16385"],
                "--width and --height must be between 1 and 16384"
            ),
            (["a.jpg", "-o", "b.png", "--quality", "0"], "--quality must be between 1 and 100"),
            (["a.jpg", "-o", "b.png", "--quality", "101"], "--quality must be between 1 and 100"),
            (
                ["a.jpg", "-o", "b.txt"],
                "cannot tell the output format from 'b.txt': end it in .png, .jpg, .webp, .avif or .gif"
            ),
            (
                ["a.jpg", "-o", "noextension"],
                "cannot tell the output format from 'noextension': end it in .png, .jpg, .webp, .avif or .gif"
            ),
            (["a.jpg"], "Missing expected argument '--output <output>'"),
            (["-o", "b.png"], "Missing expected argument '<source>'"),
            (["a.jpg", "-o", "b.png", "--width", "wide"], "The value 'wide' is invalid for '--width <width>'"),
        ] as [([String], String)])
    func aWrongArgumentIsToldByItsName(_ arguments: [String], _ message: String) {
        #expect(parseError(["fetch"] + arguments) == message)
    }

    @Test func aWrongFitIsToldWithTheFits() throws {
        let message = try #require(parseError(["fetch", "a.jpg", "-o", "b.png", "--fit", "stretch"]))
        #expect(message.hasPrefix("The value 'stretch' is invalid for '--fit <fit>'"))
        #expect(ImageRequest.Thumbnail.Fit.allCases.allSatisfy { message.contains("- \($0.rawValue)") }, "\(message)")
    }
}

enum ParseTestError: Error { case otherCommand }

/// The message a user sees when `imagery ARGUMENTS` does not parse (`nil`: it does).
func parseError(_ arguments: [String]) -> String? {
    do {
        _ = try ImageryCommand.parseAsRoot(arguments)
        return nil
    } catch {
        return ImageryCommand.message(for: error)
    }
}
