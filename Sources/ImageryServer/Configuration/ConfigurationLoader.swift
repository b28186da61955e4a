import Configuration
import Foundation
import Synchronization

/// Reads every setting of ``ServerConfiguration`` through swift-configuration's `ConfigReader` over
/// layers (the first layer that has a key wins; a key no layer has keeps its default), then
/// validates the whole. Errors name the key and where its value came from.
public enum ConfigurationLoader {
    /// Where a setting's effective value came from.
    public struct Source: Sendable, Equatable, CustomStringConvertible {
        /// The layer (`command line`, `environment`, a file's path).
        public var layer: String
        /// What in it set the key (`--memory-limit`, `IMAGERY_MEMORY_LIMIT`, `memoryLimit`, `QUALITY`).
        public var origin: String
        public var description: String { origin == layer ? layer : "\(origin), \(layer)" }
    }

    /// A configuration and where each of its set values came from.
    public struct Result: Sendable {
        public var configuration: ServerConfiguration
        /// Keys some layer set, and which; keys absent here have their defaults.
        public var sources: [String: Source]
    }

    /// Reads every setting from `layers`, in order of precedence, onto `base` (default: the defaults).
    /// - Parameters:
    ///   - layers: Where settings come from, the first that has a key winning.
    ///   - base: The configuration the layers' values are read onto (default: the defaults).
    ///   - validating: Whether the result is ``ServerConfiguration/validate()``d (default: yes;
    ///     tests of the reading alone say no).
    /// - Throws: ``ConfigurationFileError`` naming the key, where its value came from, and what it takes.
    public static func load(
        _ layers: [ConfigurationLayer], base: ServerConfiguration = ServerConfiguration(), validating: Bool = true
    ) throws(ConfigurationFileError) -> Result {
        let recorder = SourceRecorder()
        var configuration = base
        var sources: [String: Source] = [:]
        if !layers.isEmpty {
            let reader = ConfigReader(providers: layers.map(\.provider), accessReporter: recorder)
            for setting in ServerConfiguration.settings {
                let key = ConfigKey(setting.key)
                let content: ConfigContent? =
                    switch setting.kind {
                    case .value: reader.string(forKey: key, isSecret: setting.isSecret).map(ConfigContent.string)
                    case .list:
                        reader.stringArray(forKey: key, isSecret: setting.isSecret).map(ConfigContent.stringArray)
                    }
                let found = recorder.take()
                let source = found.map { index, encodedKey in
                    Source(layer: layers[index].name, origin: layers[index].origins[setting.key] ?? encodedKey)
                }
                if let failure = recorder.takeError() {
                    throw ConfigurationFileError(
                        message: "\(setting.key)\(source.map { " (\($0))" } ?? ""): \(failure)")
                }
                guard let content, let source else { continue }
                do {
                    try setting.read(&configuration, content)
                } catch {
                    throw ConfigurationFileError(
                        message: "\(setting.key) (\(source)): \(error.message)", key: setting.key)
                }
                sources[setting.key] = source
            }
        }
        do {
            if validating { try configuration.validate() }
        } catch {
            guard let key = error.key else { throw error }
            throw ConfigurationFileError(
                message: "\(key)\(sources[key].map { " (\($0))" } ?? ""): \(error.message)", key: key)
        }
        return Result(configuration: configuration, sources: sources)
    }
}

/// Which layer answered the last lookup (the last provider result: the reader stops at the first value).
private final class SourceRecorder: AccessReporter, Sendable {
    private struct Last {
        var found: (index: Int, encodedKey: String)?
        var error: String?
    }
    private let last = Mutex(Last())

    func report(_ event: AccessEvent) {
        var found: (Int, String)?
        var error: String?
        if let index = event.providerResults.indices.last {
            switch event.providerResults[index].result {
            case .success(let lookup) where lookup.value != nil: found = (index, lookup.encodedKey)
            case .success: break
            case .failure(let failure): error = "\(failure)"
            }
        }
        if error == nil, let conversion = event.conversionError { error = "\(conversion)" }
        last.withLock { $0 = Last(found: found, error: error) }
    }

    func take() -> (index: Int, encodedKey: String)? { last.withLock { $0.found } }
    func takeError() -> String? { last.withLock { $0.error } }
}
