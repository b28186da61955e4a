import ArgumentParser
import Foundation

/// The release, as `imagery --version` prints it and `scripts/package` names the Debian package.
let imageryVersion = "0.1.0"

/// `imagery`: load, thumbnail and cache images.
@main
struct ImageryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imagery",
        abstract: "Load, thumbnail and cache images.",
        version: imageryVersion,
        subcommands: [ServeCommand.self, FetchCommand.self, PrefetchCommand.self, CacheCommand.self, ClusterCommand.self]
    )

    /// ArgumentParser's main, with `imagery serve`'s options also from `IMAGERY_*` variables
    /// (``EnvironmentArguments``).
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        do {
            if arguments.first == "serve" {
                let (added, warnings) = try EnvironmentArguments.arguments(
                    for: ServeCommand.self, given: arguments, environment: ProcessInfo.processInfo.environment
                )
                for warning in warnings { FileHandle.standardError.write(Data("imagery serve: \(warning)\n".utf8)) }
                arguments += added
            }
            var command = try parseAsRoot(arguments)
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
