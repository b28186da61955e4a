import ArgumentParser
@testable import ImageryCLI
import Testing

/// `imagery`'s subcommands, as the command line names them.
@Suite struct ImageryCommandTests {
    @Test(arguments: [
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
}
