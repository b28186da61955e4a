import Crypto
import Foundation

/// AWS Signature Version 4 (`AWS4-HMAC-SHA256`) for requests sent in headers: the canonical
/// request, the string to sign, the signing key and the `Authorization` header, as AWS documents
/// them. Checked against AWS's published test suite (`Tests/Fixtures/aws4_testsuite`).
///
/// S3 signs the path as sent, encoded once and not normalised (``PathRule/asSent``); other AWS
/// services normalise it first (``PathRule/normalised``).
public struct SigV4Signer: Sendable {
    public let credentials: S3Credentials
    public let region: String
    public let service: String
    public let pathRule: PathRule

    /// How the path enters the canonical request.
    public enum PathRule: Sendable {
        /// Encoded once as it is (S3: an object key may hold `//` and `.`).
        case asSent
        /// Dot segments removed and repeated slashes merged, then encoded (every other service).
        case normalised
    }

    public init(credentials: S3Credentials, region: String, service: String = "s3", pathRule: PathRule = .asSent) {
        (self.credentials, self.region, self.service, self.pathRule) = (credentials, region, service, pathRule)
    }

    /// The hash of an empty body, and of any body whose hash is not sent (`UNSIGNED-PAYLOAD` is not used:
    /// every body here is in memory, so it is hashed and the store can check it).
    public static let emptyPayloadHash = hex(SHA256.hash(data: Data()))

    /// The hex SHA-256 of `body`: the `x-amz-content-sha256` of a request that sends it.
    public static func payloadHash(_ body: Data) -> String { hex(SHA256.hash(data: body)) }

    /// A request to sign: what the canonical request is made of.
    public struct Request: Sendable {
        public var method: String
        /// The path, decoded (`/bucket/a key.jpg`): the signer encodes it.
        public var path: String
        /// The query's parameters, decoded, in any order.
        public var query: [(name: String, value: String)]
        /// The headers to sign (`host` among them), in any order and case; a name may repeat.
        public var headers: [(name: String, value: String)]
        /// ``SigV4Signer/payloadHash(_:)`` of the body.
        public var payloadHash: String

        public init(
            method: String, path: String, query: [(name: String, value: String)] = [],
            headers: [(name: String, value: String)], payloadHash: String
        ) {
            (self.method, self.path, self.query, self.headers, self.payloadHash) = (
                method, path, query, headers, payloadHash
            )
        }
    }

    /// `YYYYMMDDTHHMMSSZ` (UTC): the `x-amz-date` of a request signed at `date`.
    public static func amzDate(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return
            "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }

    /// The headers to add to `request` to sign it at `date`: `x-amz-date`, `x-amz-security-token`
    /// (with temporary credentials), `x-amz-content-sha256` (S3) and `authorization`. Those three
    /// are signed with the request's own headers.
    public func signatureHeaders(for request: Request, date: Date) -> [(name: String, value: String)] {
        var request = request
        let amzDate = Self.amzDate(date)
        var added: [(name: String, value: String)] = [("x-amz-date", amzDate)]
        if let token = credentials.sessionToken,
            !request.headers.contains(where: { $0.name.lowercased() == "x-amz-security-token" })
        {
            added.append(("x-amz-security-token", token))
        }
        if service == "s3" { added.append(("x-amz-content-sha256", request.payloadHash)) }
        request.headers += added
        added.append(("authorization", authorization(for: request, amzDate: amzDate)))
        return added
    }

    /// The `Authorization` header of `request`, whose headers already hold `x-amz-date: amzDate`.
    public func authorization(for request: Request, amzDate: String) -> String {
        let (canonical, signedHeaders) = canonicalRequest(request)
        let scope = scope(amzDate: amzDate)
        let signature = hex(
            HMAC<SHA256>.authenticationCode(
                for: Data(stringToSign(canonicalRequest: canonical, amzDate: amzDate).utf8),
                using: signingKey(day: String(amzDate.prefix(8)))
            ))
        return
            "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
    }

    /// The canonical request and its signed-header list.
    public func canonicalRequest(_ request: Request) -> (text: String, signedHeaders: String) {
        let path = pathRule == .normalised ? Self.normalise(request.path) : request.path
        let pairs: [(name: String, value: String)] = request.query.map { parameter in
            (Self.encode(parameter.name, keepingSlash: false), Self.encode(parameter.value, keepingSlash: false))
        }
        let sorted = pairs.sorted { left, right in
            left.name == right.name ? left.value < right.value : left.name < right.name
        }
        let query = sorted.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        // Names lower-cased; values trimmed, inner runs of spaces (and folded lines) made one space;
        // a repeated name's values joined with commas in the order sent.
        var values: [String: [String]] = [:]
        for (name, value) in request.headers {
            values[name.lowercased(), default: []].append(Self.trimmed(value))
        }
        let names = values.keys.sorted()
        let headers = names.map { "\($0):\(values[$0]!.joined(separator: ","))\n" }.joined()
        let signedHeaders = names.joined(separator: ";")
        let text = [
            request.method, Self.encode(path, keepingSlash: true), query, headers, signedHeaders, request.payloadHash,
        ]
        .joined(separator: "\n")
        return (text, signedHeaders)
    }

    /// The credential scope: `DAY/REGION/SERVICE/aws4_request`.
    public func scope(amzDate: String) -> String { "\(amzDate.prefix(8))/\(region)/\(service)/aws4_request" }

    /// The string to sign for a canonical request.
    public func stringToSign(canonicalRequest: String, amzDate: String) -> String {
        "AWS4-HMAC-SHA256\n\(amzDate)\n\(scope(amzDate: amzDate))\n\(hex(SHA256.hash(data: Data(canonicalRequest.utf8))))"
    }

    /// The key for a day (`YYYYMMDD`): HMACs of the day, region, service and `aws4_request`.
    func signingKey(day: String) -> SymmetricKey {
        var key = SymmetricKey(data: Data("AWS4\(credentials.secretAccessKey)".utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        return key
    }

    /// RFC 3986 encoding of everything but the unreserved characters (`A-Z a-z 0-9 - _ . ~`), and `/` in paths.
    static func encode(_ text: String, keepingSlash: Bool) -> String {
        var encoded = ""
        encoded.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepingSlash:
                encoded += "/"
            default:
                encoded += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return encoded
    }

    /// A path with `.` and `..` segments removed and empty segments merged, keeping a final slash.
    static func normalise(_ path: String) -> String {
        var segments: [Substring] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch segment {
            case ".": continue
            case "..": _ = segments.popLast()
            default: segments.append(segment)
            }
        }
        let last = path.split(separator: "/", omittingEmptySubsequences: true).last
        let endsInSlash = path.hasSuffix("/") && !segments.isEmpty && last != "." && last != ".."
        return "/" + segments.joined(separator: "/") + (endsInSlash ? "/" : "")
    }

    private static func trimmed(_ value: String) -> String {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }).joined(separator: " ")
    }
}

/// Lower-case hex of `bytes` (a digest): what SigV4 writes, and what the server names shared objects with.
package func hex<D: Sequence>(_ bytes: D) -> String where D.Element == UInt8 {
    var text = ""
    for byte in bytes { text += String(byte, radix: 16).leftPadded(to: 2) }
    return text
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
