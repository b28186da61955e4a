import Crypto
import Foundation

/// Signed URLs: with a key set, every `/image` query must end in
/// `&sig=` + base64url (no padding) of HMAC-SHA256(key, the query before `&sig=`).
/// Only the holder of the key can then make the server fetch or resize anything.
public struct RequestSigner: Sendable {
    private let key: SymmetricKey

    /// A signer with a secret key (any length; 32 random bytes is plenty).
    public init(key: String) {
        self.key = SymmetricKey(data: Data(key.utf8))
    }

    /// `query` with its signature appended: `query&sig=...`.
    public func sign(query: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Data(query.utf8), using: key)
        return query + "&sig=" + Self.base64URL(Data(code))
    }

    /// Whether the raw query carries a valid signature as its last parameter.
    /// The comparison takes the same time however many bytes match.
    public func isValid(rawQuery: String) -> Bool {
        guard
            let range = rawQuery.range(of: "&sig=", options: .backwards)
                ?? (rawQuery.hasPrefix("sig=") ? rawQuery.range(of: "sig=") : nil)
        else { return false }
        let message =
            rawQuery.hasPrefix("sig=") && range.lowerBound == rawQuery.startIndex
            ? "" : String(rawQuery[..<range.lowerBound])
        let signature = String(rawQuery[range.upperBound...])
        guard let code = Self.decodeBase64URL(signature) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: Data(message.utf8), using: key)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decodeBase64URL(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
