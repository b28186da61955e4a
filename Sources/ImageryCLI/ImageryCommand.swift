import ArgumentParser
import Foundation
import ImageryServer

/// The release, as `imagery --version` prints it and `scripts/package` names the Debian package.
let imageryVersion = "0.1.0"

/// `imagery`: load, thumbnail and cache images.
@main
struct ImageryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imagery",
        abstract: "Load, thumbnail and cache images.",
        version: imageryVersion,
        subcommands: [
            ServeCommand.self, FetchCommand.self, PrefetchCommand.self, CacheCommand.self, ClusterCommand.self,
            HealthCommand.self,
        ]
    )

    /// ArgumentParser's main, with `imagery serve`'s options also from `IMAGERY_*` variables
    /// (``EnvironmentArguments``).
    static func main() async {
        do {
            var command = try parseAsRoot(arguments(Array(CommandLine.arguments.dropFirst())))
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }

    /// The arguments to parse: `given`, and for `serve` the options the `IMAGERY_*` variables of
    /// `environment` give (``EnvironmentArguments``).
    /// - Parameters:
    ///   - environment: Default: the process's environment.
    ///   - note: Told of a variable that names no option. Default: standard error, after `imagery serve: `.
    /// - Throws: `ValidationError` for a flag's variable that is not a yes or a no.
    static func arguments(
        _ given: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
        note: (String) -> Void = ServeCommand.writeNote
    ) throws -> [String] {
        guard given.first == "serve" else { return given }
        let (added, warnings) = try EnvironmentArguments.arguments(
            for: ServeCommand.self, given: given, environment: environment, readElsewhere: ServeCommand.settingOptions,
            otherKnown: Set(ServerConfiguration.settings.map(\.variable))
        )
        for warning in warnings { note(warning) }
        return given + added
    }
}
