import ArgumentParser
import Testing

@testable import ImageryCLI

/// `imagery`'s subcommands, as the command line names them; its version and help.
@Suite struct ImageryCommandTests {
    @Test(
        arguments: [
            (["serve"], ServeCommand.self as any ParsableCommand.Type),
            (["fetch", "a.jpg", "-o", "b.png"], FetchCommand.self),
            (["prefetch", "-"], PrefetchCommand.self),
            (["cache", "stats"], CacheCommand.Stats.self),
            (["cluster", "nginx-config", "--instance", "a:1"], NginxConfigCommand.self),
        ] as [([String], any ParsableCommand.Type)])
    func eachSubcommandIsParsedAsItsCommand(arguments: [String], command: any ParsableCommand.Type) throws {
        let parsed = try ImageryCommand.parseAsRoot(arguments)
        #expect(type(of: parsed) == command)
    }

    @Test func versionIsTheRelease() {
        #expect(parseError(["--version"]) == imageryVersion)
    }

    @Test func anUnknownSubcommandIsTold() {
        #expect(parseError(["resize"]) == "Unexpected argument 'resize'")
    }

    /// Every subcommand's help is written (ArgumentParser checks its options' names do not collide).
    @Test(arguments: [["serve"], ["fetch"], ["prefetch"], ["cache", "trim"], ["cluster", "nginx-config"]])
    func everyCommandHasHelp(_ path: [String]) throws {
        let help = ImageryCommand.helpMessage(for: try #require(ImageryCommand.subcommand(at: path)))
        #expect(help.contains("USAGE: imagery \(path.joined(separator: " "))"))
    }
}

extension ImageryCommand {
    /// The subcommand at `path` (`["cache", "trim"]`).
    static func subcommand(at path: [String]) -> (any ParsableCommand.Type)? {
        var command: any ParsableCommand.Type = ImageryCommand.self
        for name in path {
            guard let next = command.configuration.subcommands.first(where: { $0._commandName == name }) else {
                return nil
            }
            command = next
        }
        return command
    }
}
