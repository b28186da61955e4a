import ArgumentParser
import Foundation
import ImageryServer

/// `imagery cluster`: what running several instances needs from engines that exist (nginx).
struct ClusterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster",
        abstract: "Configuration for several imagery serve instances behind nginx.",
        subcommands: [NginxConfigCommand.self]
    )
}

/// `imagery cluster nginx-config`: nginx sharding requests over instances by source.
struct NginxConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nginx-config",
        abstract: "Print an nginx configuration that shards requests over instances by source (hash ... consistent).",
        discussion: """
            Every size and format of one source goes to one instance, so one source costs one origin fetch \
            in the whole cluster; an instance that fails is passed over (the next one on the ring answers). \
            By default the output is a file for /etc/nginx/conf.d/; --standalone DIR prints a whole nginx.conf \
            for `nginx -c FILE` with its pid, logs and temporary files in DIR. See docs/DEPLOYING.md.
            """
    )

    @Option(name: .customLong("instance"), help: "HOST:PORT of an instance (repeatable, or comma-separated).")
    var instances: [String] = []

    @Option(help: "What nginx listens on: a port, or ADDRESS:PORT (default 8080).")
    var listen = "8080"

    @Option(help: "consistent (by source, the default) or round-robin (the control in benchmarks).")
    var balance: NginxClusterConfiguration.Balance = .consistent

    @Option(help: "Seconds an instance that failed is passed over (default 10).")
    var failTimeout = 10

    @Option(help: "Print a whole nginx.conf whose pid, logs and temporary files are in this directory.")
    var standalone: String?

    @Flag(help: "With --standalone: log requests to DIR/access.log.")
    var accessLog = false

    /// Every `--instance`, comma-separated lists split.
    private var allInstances: [String] { instances.flatMap { $0.split(separator: ",").map(String.init) } }

    func validate() throws {
        let all = allInstances
        guard !all.isEmpty else { throw ValidationError("give at least one --instance HOST:PORT") }
        for instance in all {
            guard let colon = instance.lastIndex(of: ":"), colon != instance.startIndex,
                let port = Int(instance[instance.index(after: colon)...]), (1...65535).contains(port),
                !instance.contains(where: { $0 == ";" || $0 == "{" || $0 == "}" || $0.isWhitespace })
            else { throw ValidationError("--instance takes HOST:PORT, such as 127.0.0.1:8081, not '\(instance)'") }
        }
        guard !listen.isEmpty, !listen.contains(where: { $0 == ";" || $0 == "{" || $0 == "}" || $0.isWhitespace })
        else {
            throw ValidationError("--listen takes a port or ADDRESS:PORT")
        }
        guard (1...86_400).contains(failTimeout) else {
            throw ValidationError("--fail-timeout takes 1 to 86400 seconds")
        }
    }

    func run() throws {
        var configuration = NginxClusterConfiguration(instances: allInstances, listen: listen)
        configuration.balance = balance
        configuration.failTimeout = failTimeout
        if let standalone {
            let directory = URL(fileURLWithPath: standalone).standardizedFileURL.path
            print(configuration.renderStandalone(directory: directory, accessLog: accessLog), terminator: "")
        } else {
            print(configuration.renderServerBlocks(), terminator: "")
        }
    }
}

extension NginxClusterConfiguration.Balance: ExpressibleByArgument {}
