import ArgumentParser
import Foundation

/// Every option of a command also from the environment (12-factor): `--memory-limit 1G` is
/// `IMAGERY_MEMORY_LIMIT=1G`, `--no-disk-cache` is `IMAGERY_NO_DISK_CACHE=true`, a repeatable option
/// takes a comma-separated list (`IMAGERY_ALLOW_HOST=a.example,*.b.example`). The command line wins:
/// a variable is used only for an option the arguments do not give.
///
/// The options are read from the command's own description (ArgumentParser's help dump), so every
/// option, present and future, has its variable and none is listed twice.
enum EnvironmentArguments {
    /// Variables with the prefix that name no option of the command are reported, except these
    /// (read elsewhere: the test suite's corpus locations).
    static let otherVariables: Set<String> = ["IMAGERY_CORPUS", "IMAGERY_CORPUS_BAD"]

    struct Option: Decodable {
        struct Name: Decodable {
            let kind: String
            let name: String
        }
        let kind: String
        let names: [Name]?
        let isRepeating: Bool

        var longName: String? { names?.first { $0.kind == "long" }?.name }
    }

    private struct Dump: Decodable {
        struct Command: Decodable {
            let arguments: [Option]?
        }
        let command: Command
    }

    /// The options and flags of `command` with a long name, but `--help` and `--version`: a variable
    /// left in an environment must never turn a server's start into printing its help.
    static func options(of command: any ParsableCommand.Type) -> [Option] {
        guard let dump = try? JSONDecoder().decode(Dump.self, from: Data(command._dumpHelp().utf8)) else { return [] }
        return (dump.command.arguments ?? []).filter {
            ($0.kind == "option" || $0.kind == "flag") && $0.longName != nil && $0.longName != "help"
                && $0.longName != "version"
        }
    }

    /// `PREFIX` + the option's long name in upper case, `-` as `_`.
    static func variableName(_ longName: String, prefix: String) -> String {
        prefix + longName.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// The arguments the environment adds to `given` for `command`, and warnings for variables with
    /// the prefix that name no option.
    /// - Throws: `ValidationError` for a flag's variable that is not a yes or a no.
    /// - Parameters:
    ///   - readElsewhere: Options whose variables are read by the command itself (`serve`'s settings,
    ///     through its configuration layers): not added here, and not reported.
    ///   - otherKnown: More variables that are not reported (`serve`'s configuration keys' own).
    static func arguments(
        for command: any ParsableCommand.Type, given: [String], environment: [String: String],
        prefix: String = "IMAGERY_",
        readElsewhere: Set<String> = [], otherKnown: Set<String> = []
    ) throws -> (arguments: [String], warnings: [String]) {
        var added: [String] = []
        var known: Set<String> = otherVariables.union(otherKnown)
        for option in options(of: command) {
            guard let longName = option.longName else { continue }
            let variable = variableName(longName, prefix: prefix)
            known.insert(variable)
            if readElsewhere.contains(longName) { continue }
            guard let value = environment[variable] else { continue }
            let flag = "--" + longName
            if given.contains(where: { $0 == flag || $0.hasPrefix(flag + "=") }) { continue }  // the command line wins
            if option.kind == "flag" {
                switch value.lowercased() {
                case "1", "true", "yes", "on": added.append(flag)
                case "0", "false", "no", "off", "": break
                default: throw ValidationError("\(variable) must be true or false, not '\(value)'")
                }
            } else if option.isRepeating {
                for item in value.split(separator: ",") where !item.trimmingCharacters(in: .whitespaces).isEmpty {
                    added += [flag, item.trimmingCharacters(in: .whitespaces)]
                }
            } else {
                added += [flag, value]
            }
        }
        let warnings = environment.keys.filter { $0.hasPrefix(prefix) && !known.contains($0) }.sorted().map {
            "ignoring \($0): no option or configuration key has that name (imagery serve --print-settings lists them)"
        }
        return (added, warnings)
    }
}
