/// Why an S3 request failed. Each case says what an operator can do about it.
public enum S3Error: Error, Sendable, Hashable, CustomStringConvertible {
    /// No usable credentials (the environment, or a credentials file).
    case credentials(String)
    /// The endpoint or bucket is not usable (`--s3-endpoint` must be an http or https URL).
    case configuration(String)
    /// The store answered with an error status (after retries, for 5xx and throttling), with S3's error code if it sent one.
    case status(Int, code: String?)
    /// The object is larger than the client's limit (bytes).
    case tooLarge(limit: Int)
    /// The store did not answer in time (after retries).
    case timedOut
    /// The store could not be reached (after retries), with the underlying reason.
    case transport(String)

    public var description: String {
        switch self {
        case .credentials(let reason):
            "S3 credentials: \(reason) (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give a credentials file)"
        case .configuration(let reason): "S3 configuration: \(reason)"
        case .status(let status, let code): "the S3 store answered HTTP \(status)\(code.map { " (\($0))" } ?? "")"
        case .tooLarge(let limit): "the S3 object is larger than the limit of \(limit) bytes"
        case .timedOut: "the S3 store did not answer in time"
        case .transport(let reason): "cannot reach the S3 store: \(reason)"
        }
    }

    /// Whether trying again may succeed: 5xx, 429 (throttling), timeouts and connection failures.
    var isTransient: Bool {
        switch self {
        case .status(let status, _): status >= 500 || status == 429
        case .timedOut, .transport: true
        case .credentials, .configuration, .tooLarge: false
        }
    }
}
