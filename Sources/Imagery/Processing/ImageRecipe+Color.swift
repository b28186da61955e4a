import Foundation

extension ImageRecipe {
    /// An sRGB colour with alpha, 8 bits per channel.
    public struct Color: Sendable, Hashable, CustomStringConvertible {
        public var red: UInt8
        public var green: UInt8
        public var blue: UInt8
        /// 255: opaque.
        public var alpha: UInt8

        public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
            (self.red, self.green, self.blue, self.alpha) = (red, green, blue, alpha)
        }

        public static let white = Color(red: 255, green: 255, blue: 255)
        public static let black = Color(red: 0, green: 0, blue: 0)
        public static let transparent = Color(red: 0, green: 0, blue: 0, alpha: 0)

        /// `RGB`, `RRGGBB` or `RRGGBBAA` in hex, with or without `#`.
        public init?(hex: String) {
            var digits = Substring(hex)
            if digits.hasPrefix("#") { digits = digits.dropFirst() }
            guard digits.allSatisfy(\.isHexDigit), digits.utf8.count == digits.count else { return nil }
            let values: [UInt8]
            switch digits.count {
            case 3: values = digits.map { UInt8(String(repeating: $0, count: 2), radix: 16)! }
            case 6, 8:
                var chunks: [UInt8] = []
                var index = digits.startIndex
                while index < digits.endIndex {
                    let next = digits.index(index, offsetBy: 2)
                    chunks.append(UInt8(digits[index..<next], radix: 16)!)
                    index = next
                }
                values = chunks
            default: return nil
            }
            self.init(red: values[0], green: values[1], blue: values[2], alpha: values.count == 4 ? values[3] : 255)
        }

        /// Lower-case hex, `RRGGBB` or `RRGGBBAA` when not opaque.
        public var description: String {
            let channels = alpha == 255 ? [red, green, blue] : [red, green, blue, alpha]
            return channels.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        }
    }
}
