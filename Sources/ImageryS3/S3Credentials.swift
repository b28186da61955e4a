import Foundation

/// An access key pair (and a session token for temporary credentials). Taken from the environment
/// or a file, never from the command line, where every user of the machine can read it (`ps`).
public struct S3Credentials: Sendable, Equatable {
    public var accessKeyID: String
    public var secretAccessKey: String
    public var sessionToken: String?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        (self.accessKeyID, self.secretAccessKey, self.sessionToken) = (accessKeyID, secretAccessKey, sessionToken)
    }

    /// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`, as every AWS tool reads
    /// them; `nil` unless the first two are set.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        -> S3Credentials?
    {
        guard let id = environment["AWS_ACCESS_KEY_ID"], !id.isEmpty,
            let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty
        else { return nil }
        return S3Credentials(
            accessKeyID: id, secretAccessKey: secret,
            sessionToken: environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 })
    }

    /// The profile `profile` of an AWS shared credentials file (`~/.aws/credentials`: an INI file,
    /// `[default]` then `aws_access_key_id = ...`, `aws_secret_access_key = ...`, optionally
    /// `aws_session_token = ...`).
    /// - Throws: ``S3Error/credentials(_:)`` when the file cannot be read or lacks the keys.
    public static func fromFile(_ url: URL, profile: String = "default") throws(S3Error) -> S3Credentials {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else {
            throw .credentials("cannot read the credentials file \(url.path)")
        }
        var section: String?
        var values: [String: String] = [:]
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                section = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                continue
            }
            guard section == profile, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            values[key] = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        }
        guard let id = values["aws_access_key_id"], !id.isEmpty, let secret = values["aws_secret_access_key"],
            !secret.isEmpty
        else {
            throw .credentials("\(url.path) has no aws_access_key_id and aws_secret_access_key in [\(profile)]")
        }
        return S3Credentials(accessKeyID: id, secretAccessKey: secret, sessionToken: values["aws_session_token"])
    }
}
