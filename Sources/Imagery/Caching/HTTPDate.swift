import Foundation

/// HTTP dates (RFC 9110 5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime forms.
public enum HTTPDate {
    private static let formatters: Locked<[DateFormatter]> = Locked(
        ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"].map { format in
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            return formatter
        }
    )

    /// The date in `string`, or `nil` when it is not an HTTP date.
    /// - Complexity: IMF-fixdate (what every current server sends) is read by hand, in well
    ///   under a microsecond and without a lock; the obsolete forms go through `DateFormatter`.
    public static func parse(_ string: String) -> Date? {
        if let date = parseIMFFixdate(string) { return date }
        // HTTP dates are short printable ASCII. Anything else never reaches DateFormatter, which
        // traps on some strings with combining marks ("Incorrect range", found by the fuzzer).
        guard string.utf8.count <= 64, string.utf8.allSatisfy({ (0x20...0x7E).contains($0) || $0 == 0x09 }) else {
            return nil
        }
        let trimmed = string.trimmingCharacters(in: .whitespaces)
        return formatters.withLock { formatters in
            for formatter in formatters {
                if let date = formatter.date(from: trimmed) { return date }
            }
            return nil
        }
    }

    /// `date` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
    public static func format(_ date: Date) -> String {
        formatters.withLock { $0[0].string(from: date) }
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`, exactly 29 bytes (surrounding spaces allowed), else `nil`.
    static func parseIMFFixdate(_ string: String) -> Date? {
        var string = string
        return string.withUTF8 { bytes -> Date? in
            var start = 0
            var end = bytes.count
            while start < end, bytes[start] == 0x20 { start += 1 }
            while end > start, bytes[end - 1] == 0x20 { end -= 1 }
            guard end - start == 29 else { return nil }
            let b = UnsafeBufferPointer(rebasing: bytes[start..<end])
            guard b[3] == UInt8(ascii: ","), b[4] == 0x20, b[7] == 0x20, b[11] == 0x20, b[16] == 0x20,
                b[19] == UInt8(ascii: ":"), b[22] == UInt8(ascii: ":"), b[25] == 0x20,
                b[26] == UInt8(ascii: "G"), b[27] == UInt8(ascii: "M"), b[28] == UInt8(ascii: "T")
            else { return nil }
            func number(_ from: Int, _ count: Int) -> Int? {
                var value = 0
                for index in from..<(from + count) {
                    let digit = Int(b[index]) - 48
                    guard (0...9).contains(digit) else { return nil }
                    value = value * 10 + digit
                }
                return value
            }
            let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
            let monthName = String(decoding: UnsafeBufferPointer(rebasing: b[8..<11]), as: UTF8.self)
            guard let monthIndex = months.firstIndex(of: monthName), let day = number(5, 2), let year = number(12, 4),
                let hour = number(17, 2), let minute = number(20, 2), let second = number(23, 2),
                (1...31).contains(day), hour < 24, minute < 60, second < 61
            else { return nil }
            // Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
            let month = monthIndex + 1
            let y = month <= 2 ? year - 1 : year
            let era = (y >= 0 ? y : y - 399) / 400
            let yearOfEra = y - era * 400
            let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
            let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
            let days = era * 146_097 + dayOfEra - 719_468
            return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3600 + minute * 60 + second))
        }
    }
}
