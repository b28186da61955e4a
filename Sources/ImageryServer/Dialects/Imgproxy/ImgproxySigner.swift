import Crypto
import Foundation

/// imgproxy's URL signatures: HMAC-SHA256 with a key over a salt and the path after the signature
/// (from its `/`), truncated to ``size`` bytes, base64url without padding. Several key and salt pairs
/// may be valid at once (imgproxy's `IMGPROXY_KEY` and `IMGPROXY_SALT` lists, for rotating keys).
struct ImgproxySigner: Sendable {
    private let pairs: [(key: SymmetricKey, salt: Data)]
    /// Signature bytes, 1...32 (imgproxy's `IMGPROXY_SIGNATURE_SIZE`, default 32).
    let size: Int

    /// - Parameters:
    ///   - keys: Hex-encoded keys, as imgproxy takes them.
    ///   - salts: Hex-encoded salts, one per key.
    /// - Returns: `nil` unless every key and salt is hex, as many salts as keys, and `size` in 1...32.
    init?(keys: [String], salts: [String], size: Int = 32) {
        guard !keys.isEmpty, keys.count == salts.count, (1...32).contains(size) else { return nil }
        var pairs: [(SymmetricKey, Data)] = []
        for (key, salt) in zip(keys, salts) {
            guard let keyBytes = Self.hex(key), let saltBytes = Self.hex(salt), !keyBytes.isEmpty else { return nil }
            pairs.append((SymmetricKey(data: keyBytes), saltBytes))
        }
        (self.pairs, self.size) = (pairs, size)
    }

    /// The signature of `path` (`/rs:fill:300:200/plain/http://example.com/a.jpg`) with the first pair.
    func signature(of path: Substring) -> String {
        Self.base64URL(code(path, pairs[0]))
    }

    /// Whether `signature` signs `path` with any pair; each comparison takes the same time however many bytes match.
    func isValid(_ signature: Substring, for path: Substring) -> Bool {
        guard let given = Self.data(base64URL: signature), given.count == size else { return false }
        var valid = false
        for pair in pairs {
            let expected = code(path, pair)
            var difference: UInt8 = 0
            for (a, b) in zip(given, expected) { difference |= a ^ b }
            valid = valid || difference == 0
        }
        return valid
    }

    private func code(_ path: Substring, _ pair: (key: SymmetricKey, salt: Data)) -> Data {
        var hmac = HMAC<SHA256>(key: pair.key)
        hmac.update(data: pair.salt)
        if path.first != "/" { hmac.update(data: Data("/".utf8)) }
        hmac.update(data: Data(path.utf8))
        return Data(hmac.finalize()).prefix(size)
    }

    static func hex(_ text: String) -> Data? {
        let bytes = Array(text.utf8)
        guard bytes.count % 2 == 0 else { return nil }
        var data = Data(capacity: bytes.count / 2)
        for index in stride(from: 0, to: bytes.count, by: 2) {
            guard let byte = UInt8(String(decoding: bytes[index..<index + 2], as: UTF8.self), radix: 16) else {
                return nil
            }
            data.append(byte)
        }
        return data
    }

    static func base64URL(_ data: Data) -> String {
        var text = data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
            of: "/", with: "_")
        while text.last == "=" { text.removeLast() }
        return text
    }

    static func data(base64URL text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.last == "=" { base64.removeLast() }
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
