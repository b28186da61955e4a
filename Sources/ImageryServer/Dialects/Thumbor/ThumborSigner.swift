import Crypto
import Foundation

/// thumbor's URL signatures: the path after the signature, HMAC-SHA1 with the security key,
/// base64url with padding (28 characters), as libthumbor's `CryptoURL` writes them.
struct ThumborSigner: Sendable {
    private let key: SymmetricKey

    init(key: String) {
        self.key = SymmetricKey(data: Data(key.utf8))
    }

    /// The signature of `path` (`300x200/smart/example.com/a.jpg`).
    func signature(of path: Substring) -> String {
        Data(HMAC<Insecure.SHA1>.authenticationCode(for: Data(path.utf8), using: key)).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }

    /// Whether `signature` signs `path`; the comparison takes the same time however many bytes match.
    func isValid(_ signature: String, for path: Substring) -> Bool {
        let base64 = signature.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard signature.count == 28, let code = Data(base64Encoded: base64) else { return false }
        return HMAC<Insecure.SHA1>.isValidAuthenticationCode(code, authenticating: Data(path.utf8), using: key)
    }
}
