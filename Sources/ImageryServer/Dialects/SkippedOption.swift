import Foundation
import Imagery
import Logging

/// An option a URL names that is not applied because the peer whose syntax it is skips it too:
/// thumbor runs only the filters its `FILTERS` loads, and drops a loaded filter whose arguments its
/// grammar rejects (`sharpen()`, `watermark(URL,30)`), answering with the image as if the filter
/// were not there. Skipped here likewise, never silently: the response names it
/// (``ImageAnswers/skippedFiltersHeader``), `imagery_thumbor_filters_skipped_total{filter}` counts
/// it, and ``SkippedOptionLog`` writes a warning the first time it sees each signature.
/// Not part of any cache key: the output is the one the URL without the option makes.
package struct SkippedOption: Sendable, Hashable {
    package enum Reason: Sendable, Hashable {
        /// A filter of thumbor's that the configuration's `FILTERS` does not load.
        case notLoaded
        /// A name that is no thumbor filter, nor one the configuration loads.
        case unknown
        /// A filter `FILTERS` loads that has no equivalent here (a site's own module).
        case notImplemented
        /// Arguments outside the filter's grammar: what is wrong with them.
        case arguments(String)
    }

    /// The option's name as written (a thumbor filter's name).
    package var name: String
    /// How many arguments it was given (with the name, what a warning is written once for).
    package var argumentCount: Int
    package var reason: Reason

    package init(name: String, argumentCount: Int, reason: Reason) {
        (self.name, self.argumentCount, self.reason) = (name, argumentCount, reason)
    }

    /// The name and how many arguments: `sharpen/0`.
    var signature: String { "\(name)/\(argumentCount)" }

    /// Why it was skipped, in words for the log.
    var explanation: String {
        switch reason {
        case .notLoaded:
            "thumbor filter \(name) is not among the FILTERS this server loads: skipped, as thumbor skips it"
        case .unknown: "thumbor filter \(name) is not one of thumbor's filters: skipped, as thumbor skips it"
        case .notImplemented: "thumbor filter \(name) is loaded but has no equivalent here: skipped"
        case .arguments(let problem): "\(problem); skipped, as thumbor skips a filter whose arguments it cannot read"
        }
    }
}

/// Writes a warning for each kind of skipped option once (by ``SkippedOption/signature``, up to
/// ``rememberedSignatures`` of them: URLs are written by anyone, the log's size is not theirs to set).
package final class SkippedOptionLog: Sendable {
    private let logger: Logger
    private let seen = Locked<Set<String>>([])
    /// How many signatures are remembered; past that, no new ones are logged (the counter still counts).
    static let rememberedSignatures = 256

    package init(logger: Logger) { self.logger = logger }

    /// Logs the options in `skipped` whose signature has not been logged before; `path` is the URL's
    /// path or query as received (at most 200 characters of it are written).
    package func report(_ skipped: [SkippedOption], in path: some StringProtocol) {
        guard !skipped.isEmpty else { return }
        let fresh = seen.withLock { seen in
            skipped.filter { option in
                guard seen.count < Self.rememberedSignatures || seen.contains(option.signature) else { return false }
                return seen.insert(option.signature).inserted
            }
        }
        for option in fresh {
            let line =
                "\(option.explanation) (first seen in \(path.prefix(200)); later ones are counted in imagery_thumbor_filters_skipped_total)"
            logger.warning("\(Self.printable(line))", metadata: ["skipped_filter": "\(Self.printable(option.name))"])
        }
    }

    /// `text` with control characters (a URL's decoded `%0A`) as spaces: one log line, as written by us.
    static func printable(_ text: String) -> String {
        String(
            String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
    }
}
