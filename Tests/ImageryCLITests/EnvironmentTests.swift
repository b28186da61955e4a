import ArgumentParser
import Foundation
import ImageryServer
import Testing

@testable import ImageryCLI

/// `imagery serve`'s settings from the environment: every option as an `IMAGERY_*` variable
/// (``EnvironmentArguments``), imgproxy's `IMGPROXY_*` variables, and which wins. Each test passes
/// its own environment: the process's is never read.
@Suite struct EnvironmentTests {
    static func configuration(_ arguments: [String], _ environment: [String: String]) throws -> (
        ServerConfiguration, notes: [String]
    ) {
        let (configuration, notes) = try ServeCommandTests.configuration(arguments, environment: environment)
        return (configuration, notes)
    }

    /// `imagery serve` with no arguments.
    static func configuration(_ environment: [String: String]) throws -> (ServerConfiguration, notes: [String]) {
        try configuration([], environment)
    }

    @Test func everyOptionOfServeHasItsVariable() throws {
        let options = EnvironmentArguments.options(of: ServeCommand.self)
        let names = Set(options.compactMap(\.longName))
        #expect(
            names.isSuperset(of: [
                "config", "host", "port", "no-disk-cache", "memory-limit", "allow-host", "cluster-instance",
                "log-format",
            ]))
        let withHelp = try ImageryCommand.arguments(["serve"], environment: ["IMAGERY_HELP": "1"])
        // --help and --version have no variables: IMAGERY_HELP=1 must not make `imagery serve` print its help.
        #expect(!names.contains("help") && !names.contains("version"))
        #expect(withHelp == ["serve"])
        #expect(options.first { $0.longName == "allow-host" }?.isRepeating == true)
        #expect(options.first { $0.longName == "no-disk-cache" }?.kind == "flag")
        #expect(
            EnvironmentArguments.variableName("max-inflight-memory", prefix: "IMAGERY_")
                == "IMAGERY_MAX_INFLIGHT_MEMORY")
    }

    @Test func aVariableSetsItsOption() throws {
        let (configuration, notes) = try Self.configuration([
            "IMAGERY_PORT": "9001", "IMAGERY_HOST": "0.0.0.0", "IMAGERY_MEMORY_LIMIT": "1G",
            "IMAGERY_SIGNING_KEY": "secret",
            "IMAGERY_IDLE_TIMEOUT": "7", "IMAGERY_LOG_FORMAT": "json",
        ])
        #expect(
            configuration.listener.port == 9001 && configuration.listener.host == "0.0.0.0"
                && configuration.limits.memoryLimit == 1 << 30)
        #expect(configuration.requests.signingKey == "secret" && configuration.listener.idleTimeout == .seconds(7))
        #expect(notes.isEmpty)
        let arguments = try ImageryCommand.arguments(["serve"], environment: ["IMAGERY_LOG_FORMAT": "json"])
        #expect((try ImageryCommand.parseAsRoot(arguments) as? ServeCommand)?.logFormat == .json)
    }

    /// The command line wins over a variable, in either spelling (`--port 1`, `--port=1`).
    @Test(arguments: [["--port", "9002"], ["--port=9002"]])
    func theCommandLineWinsOverAVariable(_ arguments: [String]) throws {
        #expect(try Self.configuration(arguments, ["IMAGERY_PORT": "9001"]).0.listener.port == 9002)
    }

    @Test(arguments: ["1", "true", "TRUE", "yes", "on"])
    func aFlagVariableThatSaysYesSetsTheFlag(_ value: String) throws {
        #expect(try Self.configuration(["IMAGERY_NO_DISK_CACHE": value]).0.caching.directory == nil)
    }

    @Test(arguments: ["0", "false", "no", "off", ""])
    func aFlagVariableThatSaysNoLeavesTheFlagOff(_ value: String) throws {
        #expect(try Self.configuration(["IMAGERY_NO_DISK_CACHE": value]).0.caching.directory != nil)
    }

    @Test func aFlagVariableThatIsNeitherIsRefusedByName() {
        #expect(
            ServeCommandTests.errorMessage([], environment: ["IMAGERY_NO_DISK_CACHE": "maybe"])
                == "IMAGERY_NO_DISK_CACHE must be true or false, not 'maybe'")
    }

    /// A repeatable option's variable is a comma-separated list (blank items skipped); given on the
    /// command line, the option takes none of it.
    @Test func aRepeatableOptionsVariableIsAList() throws {
        let environment = [
            "IMAGERY_ALLOW_HOST": " a.example, *.b.example ,, ", "IMAGERY_CLUSTER_INSTANCE": "a:1,b:2",
            "IMAGERY_CLUSTER_SELF": "a:1",
        ]
        let configuration = try Self.configuration(environment).0
        #expect(configuration.origins.allowedHosts == ["a.example", "*.b.example"])
        #expect(configuration.cluster.instances == ["a:1", "b:2"] && configuration.cluster.selfAddress == "a:1")
        #expect(
            try Self.configuration(["--allow-host", "c.example"], environment).0.origins.allowedHosts == ["c.example"])
    }

    /// A variable with the prefix that names no option is told, not an error; the test suite's own are not told.
    @Test func aVariableThatNamesNoOptionIsTold() throws {
        let (configuration, notes) = try Self.configuration([
            "IMAGERY_PROT": "9000", "IMAGERY_CORPUS": "/corpus", "OTHER": "x",
        ])
        #expect(configuration.listener.port == 8080)
        #expect(
            notes == [
                "ignoring IMAGERY_PROT: no option or configuration key has that name "
                    + "(imagery serve --print-settings lists them)"
            ])
    }

    /// Only `serve` reads the environment.
    @Test func otherCommandsReadNoVariables() throws {
        let given = ["fetch", "a.jpg", "-o", "b.png"]
        var notes: [String] = []
        #expect(
            try ImageryCommand.arguments(given, environment: ["IMAGERY_OUTPUT": "c.png", "IMAGERY_X": "1"]) {
                notes.append($0)
            } == given)
        #expect(notes.isEmpty)
    }

    // MARK: - imgproxy's variables

    @Test func imgproxysVariablesAreApplied() throws {
        let (configuration, notes) = try Self.configuration([
            "IMGPROXY_BIND": ":9300", "IMGPROXY_KEY": "aabb", "IMGPROXY_SALT": "ccdd", "IMGPROXY_MAX_CLIENTS": "12",
            "IMGPROXY_TIMEOUT": "9",
        ])
        #expect(configuration.listener.host == "0.0.0.0" && configuration.listener.port == 9300)
        #expect(configuration.imgproxy.keys == ["aabb"] && configuration.imgproxy.salts == ["ccdd"])
        #expect(configuration.listener.maximumConnections == 12 && configuration.limits.requestTimeout == .seconds(9))
        #expect(notes.isEmpty)
    }

    @Test func imgproxysVariablesNotAppliedAreTold() throws {
        let (_, notes) = try Self.configuration([
            "IMGPROXY_ABS_NAME": "account", "IMGPROXY_NO_SUCH_THING": "1", "IMGPROXY_PNG_QUANTIZE": "true",
        ])
        #expect(
            notes.sorted() == [
                "IMGPROXY_ABS_NAME is imgproxy's but not supported here: its setting is not applied",
                "IMGPROXY_NO_SUCH_THING is no imgproxy setting: ignored",
                "IMGPROXY_PNG_QUANTIZE is imgproxy's but not supported here: its setting is not applied",
            ])
    }

    @Test func aWrongImgproxyValueIsToldByTheVariablesName() {
        #expect(
            ServeCommandTests.errorMessage([], environment: ["IMGPROXY_BIND": "nowhere"])
                == "IMGPROXY_BIND=nowhere is not valid: expected HOST:PORT or :PORT")
        #expect(
            ServeCommandTests.errorMessage([], environment: ["IMGPROXY_KEY": "aa"])
                == "IMGPROXY_KEY and IMGPROXY_SALT must list as many hex keys as salts")
    }

    /// `--config`'s file, then imgproxy's variables, then `IMAGERY_*` variables, then the command line.
    @Test func eachSourceWinsOverTheOneBefore() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("precedence-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"port": 1000}"#.utf8).write(to: file)
        let config = ["--config", file.path]
        #expect(try Self.configuration(config, [:]).0.listener.port == 1000)
        #expect(try Self.configuration(config, ["IMGPROXY_BIND": ":2000"]).0.listener.port == 2000)
        #expect(
            try Self.configuration(config, ["IMGPROXY_BIND": ":2000", "IMAGERY_PORT": "3000"]).0.listener.port == 3000)
        #expect(
            try Self.configuration(config + ["--port", "4000"], ["IMGPROXY_BIND": ":2000", "IMAGERY_PORT": "3000"]).0
                .listener.port == 4000)
        #expect(
            try Self.configuration(
                ["--imgproxy-key", "ee", "--imgproxy-salt", "ff"], ["IMGPROXY_KEY": "aa", "IMGPROXY_SALT": "bb"]
            ).0.imgproxy.keys == ["ee"])
    }
}
