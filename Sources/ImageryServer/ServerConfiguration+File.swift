import Foundation

extension ServerConfiguration {
    /// A configuration file: JSON whose keys are the names of the properties
    /// (`host`, `port`, `cacheDirectory`, `memoryLimit`, `maximumInflightMemory`,
    /// `admissionQueueLength`, `admissionTimeoutSeconds`, `requestTimeoutSeconds`, `idleTimeoutSeconds`, `maximumConnections`,
    /// `maximumHeaderBytes`, `diskLimit`, `allowedHosts`,
    /// `privateNetworkHosts`, `maximumSourceBytes`, `maximumSourcePixels`,
    /// `maximumOutputSide`, `originTimeoutSeconds`, `maximumConcurrentFetches`,
    /// `signingKey`, `responseMaxAge`, `minimumFreshness`, `galleryDirectory`, `galleryURLs`); absent keys keep their defaults.
    struct File: Decodable {
        var host: String?
        var port: Int?
        var cacheDirectory: String?
        var memoryLimit: Int?
        var maximumInflightMemory: Int?
        var admissionQueueLength: Int?
        var admissionTimeoutSeconds: Double?
        var idleTimeoutSeconds: Double?
        var requestTimeoutSeconds: Double?
        var maximumConnections: Int?
        var maximumHeaderBytes: Int?
        var diskLimit: Int?
        var allowedHosts: [String]?
        var privateNetworkHosts: [String]?
        var maximumSourceBytes: Int?
        var maximumSourcePixels: Int?
        var maximumOutputSide: Int?
        var originTimeoutSeconds: Double?
        var maximumConcurrentFetches: Int?
        var signingKey: String?
        var responseMaxAge: Int?
        var minimumFreshness: Int?
        var galleryDirectory: String?
        var galleryURLs: [String]?
    }

    /// The defaults overridden by the JSON configuration file at `url`.
    /// - Throws: ``ConfigurationFileError`` naming the file and what is wrong with it.
    public init(contentsOf url: URL) throws {
        self.init()
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ConfigurationFileError(message: "cannot read the configuration file \(url.path)")
        }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch DecodingError.typeMismatch(_, let context), DecodingError.dataCorrupted(let context) {
            let key = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw ConfigurationFileError(message: "\(url.path): \(key.isEmpty ? "not valid JSON" : "wrong type for \(key)")")
        } catch {
            throw ConfigurationFileError(message: "\(url.path): not a valid configuration (\(error.localizedDescription))")
        }
        if let value = file.host { host = value }
        if let value = file.port { port = value }
        if let value = file.cacheDirectory { cacheDirectory = URL(fileURLWithPath: value) }
        if let value = file.memoryLimit { memoryLimit = value }
        if let value = file.maximumInflightMemory { maximumInflightMemory = value }
        if let value = file.admissionQueueLength { admissionQueueLength = value }
        if let value = file.admissionTimeoutSeconds { admissionTimeout = .milliseconds(Int64(value * 1000)) }
        if let value = file.idleTimeoutSeconds { idleTimeout = .milliseconds(Int64(value * 1000)) }
        if let value = file.requestTimeoutSeconds { requestTimeout = .milliseconds(Int64(value * 1000)) }
        if let value = file.maximumConnections { maximumConnections = value }
        if let value = file.maximumHeaderBytes { maximumHeaderBytes = value }
        if let value = file.diskLimit { diskLimit = value }
        if let value = file.allowedHosts { allowedHosts = value }
        if let value = file.privateNetworkHosts { privateNetworkHosts = value }
        if let value = file.maximumSourceBytes { maximumSourceBytes = value }
        if let value = file.maximumSourcePixels { maximumSourcePixels = value }
        if let value = file.maximumOutputSide { maximumOutputSide = value }
        if let value = file.originTimeoutSeconds { originTimeout = .milliseconds(Int64(value * 1000)) }
        if let value = file.maximumConcurrentFetches { maximumConcurrentFetches = value }
        if let value = file.signingKey { signingKey = value }
        if let value = file.responseMaxAge { responseMaxAge = value }
        if let value = file.minimumFreshness { minimumFreshness = value }
        if let value = file.galleryDirectory { galleryDirectory = URL(fileURLWithPath: value) }
        if let value = file.galleryURLs {
            galleryURLs = try value.map { text in
                guard let image = Self.sourceURL(text) else {
                    throw ConfigurationFileError(message: "\(url.path): galleryURLs: \(text) is not an absolute http or https URL")
                }
                return image
            }
        }
    }
}

/// A configuration file that cannot be used, and why.
public struct ConfigurationFileError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { message }
}
