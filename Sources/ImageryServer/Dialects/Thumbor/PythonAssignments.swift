import Foundation

/// The simple assignments of a Python file, as thumbor's `thumbor.conf` is written: `NAME = VALUE`,
/// VALUE a string (`'a'`, `"a"`, `r'a'`), a number (`80`, `0.5`, `75e6`), `True`, `False`, `None`,
/// a list or tuple of these (over several lines if need be), a name a known import gave, or lists
/// (or strings) joined with `+`; `#` comments. The one import read is `from MODULE import NAME, ...`
/// of names the caller knows the values of (thumbor's documented `FILTERS = BUILTIN_FILTERS + [...]`).
/// Nothing is evaluated: a line that is anything else (another import, an expression, a call) is
/// reported, not run.
struct PythonAssignments {
    /// A Python literal.
    indirect enum Value: Equatable {
        case string(String)
        case integer(Int)
        case float(Double)
        case boolean(Bool)
        case none
        case list([Value])
    }

    /// The assignments in file order (a name assigned twice: the last one counts, as in Python).
    private(set) var values: [(name: String, value: Value)] = []
    /// The lines (1-based) that are not simple assignments, with their text.
    private(set) var unreadLines: [(line: Int, text: String)] = []

    /// - Parameter importable: The names each module may be imported for, with their values
    ///   (`["thumbor.filters": ["BUILTIN_FILTERS": ...]]`); an import of anything else is not read.
    init(_ text: String, importable: [String: [String: Value]] = [:]) {
        var parser = Parser(Array(text.unicodeScalars))
        while !parser.atEnd {
            parser.skipSpacesAndLines()
            guard !parser.atEnd else { break }
            let start = parser.position
            let line = parser.line
            if let imported = parser.fromImport(importable), parser.endOfStatement() {
                parser.symbols.merge(imported) { $1 }
            } else if let name = parser.identifier(), parser.skipSpaces(), parser.take("="), !parser.peek("="),
                let value = parser.expression(), parser.endOfStatement()
            {
                values.append((name, value))
            } else {
                parser.position = start
                parser.line = line
                unreadLines.append((line, parser.restOfLine().trimmingCharacters(in: .whitespaces)))
            }
        }
    }

    private struct Parser {
        let scalars: [Unicode.Scalar]
        var position = 0
        var line = 1
        /// The names imports gave, with their values.
        var symbols: [String: Value] = [:]

        init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

        var atEnd: Bool { position >= scalars.count }
        var current: Unicode.Scalar? { atEnd ? nil : scalars[position] }

        mutating func advance() {
            if scalars[position] == "\n" { line += 1 }
            position += 1
        }

        func peek(_ text: String) -> Bool {
            let wanted = Array(text.unicodeScalars)
            return position + wanted.count <= scalars.count
                && Array(scalars[position..<position + wanted.count]) == wanted
        }

        mutating func take(_ text: String) -> Bool {
            guard peek(text) else { return false }
            for _ in text.unicodeScalars { advance() }
            return true
        }

        /// Spaces and tabs; always true (for chaining).
        @discardableResult mutating func skipSpaces() -> Bool {
            while let scalar = current, scalar == " " || scalar == "\t" { advance() }
            return true
        }

        /// Spaces, line breaks and comments (inside brackets).
        mutating func skipSpacesAndLines() {
            while let scalar = current {
                if scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" {
                    advance()
                } else if scalar == "#" {
                    skipComment()
                } else {
                    return
                }
            }
        }

        mutating func skipComment() {
            while let scalar = current, scalar != "\n" {
                _ = scalar
                advance()
            }
        }

        mutating func restOfLine() -> String {
            var text = ""
            while let scalar = current, scalar != "\n" {
                text.unicodeScalars.append(scalar)
                advance()
            }
            if !atEnd { advance() }
            return text
        }

        /// After a value: spaces, an optional `;`, a comment, then the end of the line.
        mutating func endOfStatement() -> Bool {
            skipSpaces()
            _ = take(";")
            skipSpaces()
            if current == "#" { skipComment() }
            if current == "\r" { advance() }
            guard atEnd || current == "\n" else { return false }
            if !atEnd { advance() }
            return true
        }

        mutating func identifier() -> String? {
            var name = ""
            while let scalar = current,
                scalar == "_" || scalar.properties.isAlphabetic || (!name.isEmpty && ("0"..."9").contains(scalar))
            {
                name.unicodeScalars.append(scalar)
                advance()
            }
            return name.isEmpty ? nil : name
        }

        /// `from MODULE import NAME[, NAME...]` where `importable` knows each name: their values.
        mutating func fromImport(_ importable: [String: [String: Value]]) -> [String: Value]? {
            let start = position
            let startLine = line
            func fail() -> [String: Value]? {
                (position, line) = (start, startLine)
                return nil
            }
            guard identifier() == "from", skipSpaces() else { return fail() }
            var module = ""
            while let scalar = current, scalar != " ", scalar != "\t", scalar != "\n" {
                module.unicodeScalars.append(scalar)
                advance()
            }
            guard let names = importable[module], skipSpaces(), identifier() == "import" else { return fail() }
            var imported: [String: Value] = [:]
            repeat {
                skipSpaces()
                guard let name = identifier(), let value = names[name] else { return fail() }
                imported[name] = value
                skipSpaces()
            } while take(",")
            return imported
        }

        /// A value, or values joined with `+` (lists with lists, strings with strings).
        mutating func expression() -> Value? {
            guard var result = value() else { return nil }
            while true {
                let before = (position, line)
                skipSpaces()
                guard take("+") else {
                    (position, line) = before
                    return result
                }
                guard let next = value() else { return nil }
                switch (result, next) {
                case (.list(let left), .list(let right)): result = .list(left + right)
                case (.string(let left), .string(let right)): result = .string(left + right)
                default: return nil
                }
            }
        }

        mutating func value() -> Value? {
            skipSpaces()
            guard let scalar = current else { return nil }
            switch scalar {
            case "'", "\"": return string(raw: false)
            case "[": return list(closing: "]")
            case "(": return list(closing: ")")
            default: break
            }
            if scalar == "r" || scalar == "R" || scalar == "u" || scalar == "U", position + 1 < scalars.count,
                ["'", "\""].contains(scalars[position + 1])
            {
                let raw = scalar == "r" || scalar == "R"
                advance()
                return string(raw: raw)
            }
            if scalar == "-" || scalar == "+" || scalar == "." || ("0"..."9").contains(scalar) { return number() }
            guard let word = identifier() else { return nil }
            switch word {
            case "True": return .boolean(true)
            case "False": return .boolean(false)
            case "None": return Value.none
            default: return symbols[word]
            }
        }

        mutating func string(raw: Bool) -> Value? {
            guard let quote = current else { return nil }
            guard !peek(String(repeating: String(quote), count: 3)) else { return nil }  // triple quotes: not read
            advance()
            var text = ""
            while let scalar = current, scalar != quote {
                if scalar == "\n" { return nil }
                if scalar == "\\", !raw, position + 1 < scalars.count {
                    advance()
                    let escaped = scalars[position]
                    switch escaped {
                    case "n": text += "\n"
                    case "t": text += "\t"
                    case "\\", "'", "\"": text.unicodeScalars.append(escaped)
                    default:
                        text += "\\"
                        text.unicodeScalars.append(escaped)
                    }
                    advance()
                    continue
                }
                if scalar == "\\", raw, position + 1 < scalars.count {  // r'\'' keeps both characters
                    text.unicodeScalars.append(scalar)
                    advance()
                }
                text.unicodeScalars.append(scalars[position])
                advance()
            }
            guard current == quote else { return nil }
            advance()
            return .string(text)
        }

        mutating func number() -> Value? {
            var text = ""
            while let scalar = current, ("0"..."9").contains(scalar) || ["-", "+", ".", "e", "E", "_"].contains(scalar)
            {
                if scalar != "_" { text.unicodeScalars.append(scalar) }
                advance()
            }
            if let integer = Int(text) { return .integer(integer) }
            if let float = Double(text), float.isFinite { return .float(float) }
            return nil
        }

        /// A list (`[...]`) or a tuple (`(...)`); `(VALUE)` without a comma is the value itself, as in Python.
        mutating func list(closing: Unicode.Scalar) -> Value? {
            advance()
            var items: [Value] = []
            var comma = false
            while true {
                skipSpacesAndLines()
                if current == closing {
                    advance()
                    if closing == ")", items.count == 1, !comma { return items[0] }
                    return .list(items)
                }
                guard let item = expression() else { return nil }
                items.append(item)
                skipSpacesAndLines()
                comma = current == ","
                if comma { advance() } else if current != closing { return nil }
            }
        }
    }
}
