import ArgumentParser

/// `imagery`: load, thumbnail and cache images.
@main
struct ImageryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imagery",
        abstract: "Load, thumbnail and cache images.",
        subcommands: [ServeCommand.self, FetchCommand.self, PrefetchCommand.self, CacheCommand.self]
    )
}
