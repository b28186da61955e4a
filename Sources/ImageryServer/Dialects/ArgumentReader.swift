import Foundation

/// One argument's text read as a value, the same way in every dialect: whole numbers and decimals
/// within a range, and a dialect's words from the ``Vocabulary``. It owns the ranges and the phrase
/// that says what was expected ("a whole number from 1 to 100"); each dialect's reader frames that
/// phrase with its own names (`w must be ...`, `imgproxy rs: ... is not ...`, `thumbor filter
/// blur's radius must be ...`). thumbor's own argument grammar (its regular expressions, under which a
/// filter is skipped rather than refused: ``ThumborFilter/Dropped``) is checked before it.
enum ArgumentReader {
    /// What an argument had to be: a phrase such as "a whole number from 1 to 100".
    struct Expected: Error, Equatable {
        let phrase: String
    }

    /// `text` as a whole number in `range`.
    static func integer(_ text: some StringProtocol, in range: ClosedRange<Int>) throws(Expected) -> Int {
        guard let value = Int(text), range.contains(value) else { throw Expected(phrase: phrase(range)) }
        return value
    }

    /// `text` as a decimal number in `range`.
    static func number(_ text: some StringProtocol, in range: ClosedRange<Double>) throws(Expected) -> Double {
        guard let value = decimal(text), range.contains(value) else {
            throw Expected(phrase: "a number from \(format(range.lowerBound)) to \(format(range.upperBound))")
        }
        return value
    }

    /// `text` as a decimal number that `valid` takes, else `phrase` ("a number above 0").
    static func number(_ text: some StringProtocol, _ phrase: String, where valid: (Double) -> Bool) throws(Expected)
        -> Double
    {
        guard let value = decimal(text), valid(value) else { throw Expected(phrase: phrase) }
        return value
    }

    /// `text` as one of `speaker`'s words for `table`'s terms.
    static func word<Value>(
        _ text: some StringProtocol, in table: Vocabulary.Table<Value>, of speaker: Vocabulary.Speaker
    )
        throws(Expected) -> Value
    {
        guard let value = table.value(text, in: speaker) else {
            throw Expected(phrase: "one of \(table.names(in: speaker).joined(separator: ", "))")
        }
        return value
    }

    /// A finite decimal number (digits, a point and a minus: no exponent, no `nan` or `inf`).
    static func decimal(_ text: some StringProtocol) -> Double? {
        guard !text.isEmpty,
            text.utf8.allSatisfy({ (48...57).contains($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }),
            let value = Double(text), value.isFinite
        else { return nil }
        return value
    }

    /// "a whole number from A to B", or "a whole number, 0 or more" for `0...Int32.max`.
    static func phrase(_ range: ClosedRange<Int>) -> String {
        if range.upperBound >= Int(Int32.max) {
            return range.lowerBound == 0 ? "a whole number, 0 or more" : "a whole number, \(range.lowerBound) or more"
        }
        return "a whole number from \(range.lowerBound) to \(range.upperBound)"
    }

    /// `value` without a fraction where it has none (`1`, `0.5`).
    static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
