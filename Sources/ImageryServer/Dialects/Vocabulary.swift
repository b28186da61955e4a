import Foundation
import Imagery

/// The words the dialects share, each with every dialect's spellings: output formats, gravities
/// and resize modes. A dialect's reader looks its words up here and lists them from here in its
/// messages (``ArgumentReader/word(_:in:)``), so a term added or renamed is added once.
enum Vocabulary {
    /// A dialect, as a speaker of the vocabulary.
    enum Speaker: Sendable {
        case native
        case imgproxy
        case thumbor
    }

    /// One value and how each dialect writes it, its preferred spelling first (none: the dialect has
    /// no word for it).
    struct Term<Value: Sendable>: Sendable {
        let value: Value
        let spellings: [Speaker: [String]]

        init(_ value: Value, native: [String] = [], imgproxy: [String] = [], thumbor: [String] = []) {
            self.value = value
            spellings = [.native: native, .imgproxy: imgproxy, .thumbor: thumbor]
        }

        /// The same spellings in every dialect.
        init(_ value: Value, everywhere: [String]) {
            self.init(value, native: everywhere, imgproxy: everywhere, thumbor: everywhere)
        }
    }

    /// The terms of one kind, looked up by a dialect's spelling.
    struct Table<Value: Sendable>: Sendable {
        private let values: [Speaker: [String: Value]]
        private let preferred: [Speaker: [String]]

        init(_ terms: [Term<Value>]) {
            var values: [Speaker: [String: Value]] = [:]
            var preferred: [Speaker: [String]] = [:]
            for term in terms {
                for (speaker, spellings) in term.spellings {
                    for spelling in spellings { values[speaker, default: [:]][spelling] = term.value }
                    if let first = spellings.first { preferred[speaker, default: []].append(first) }
                }
            }
            self.values = values
            self.preferred = preferred
        }

        /// The value `speaker` writes as `spelling`, if it is one of its words.
        func value(_ spelling: some StringProtocol, in speaker: Speaker) -> Value? {
            values[speaker]?[String(spelling)]
        }

        /// Every spelling of `speaker`, each with its value.
        func spellings(in speaker: Speaker) -> [String: Value] { values[speaker] ?? [:] }

        /// `speaker`'s preferred spelling of each term, in the table's order (for messages).
        func names(in speaker: Speaker) -> [String] { preferred[speaker] ?? [] }
    }

    /// Output formats. thumbor's `format()` takes the five it names; `svg` only passes an SVG source
    /// on (imgproxy's), so the native query has no word for it.
    static let formats = Table<ImageFormat>([
        Term(.jpeg, native: ["jpeg", "jpg"], imgproxy: ["jpg", "jpeg"], thumbor: ["jpeg", "jpg"]),
        Term(.png, everywhere: ["png"]),
        Term(.webp, everywhere: ["webp"]),
        Term(.avif, everywhere: ["avif"]),
        Term(.gif, everywhere: ["gif"]),
        Term(.jxl, native: ["jxl"], imgproxy: ["jxl"]),
        Term(.tiff, native: ["tiff"], imgproxy: ["tiff"]),
        Term(.heic, native: ["heic"], imgproxy: ["heic"]),
        Term(.bmp, native: ["bmp"], imgproxy: ["bmp"]),
        Term(.ico, native: ["ico"], imgproxy: ["ico"]),
        Term(.svg, imgproxy: ["svg"]),
    ])

    /// Where a crop or a box keeps the image. thumbor says it with its `halign`/`valign` pair and
    /// `smart` (``ThumborURL``), not with a word of its own.
    static let gravities = Table<ImageRecipe.Gravity>([
        Term(.center, native: ["center"], imgproxy: ["ce"]),
        Term(.north, native: ["north"], imgproxy: ["no"]),
        Term(.south, native: ["south"], imgproxy: ["so"]),
        Term(.east, native: ["east"], imgproxy: ["ea"]),
        Term(.west, native: ["west"], imgproxy: ["we"]),
        Term(.northEast, native: ["northeast"], imgproxy: ["noea"]),
        Term(.northWest, native: ["northwest"], imgproxy: ["nowe"]),
        Term(.southEast, native: ["southeast"], imgproxy: ["soea"]),
        Term(.southWest, native: ["southwest"], imgproxy: ["sowe"]),
        Term(.smart(.attention), native: ["smart"], imgproxy: ["sm"]),
        Term(.smart(.entropy), native: ["entropy"]),
    ])

    /// How the native query's `fit` places an image in its box (thumbor's `fit-in` forms and
    /// imgproxy's resizing types are read by their own grammar: ``sizingModes``).
    static let fits = Table<ImageRequest.Thumbnail.Fit>(
        ImageRequest.Thumbnail.Fit.allCases.map { Term($0, native: [$0.rawValue]) })

    /// imgproxy's resizing types (`rs`, `rt`).
    static let sizingModes = Table<ImageRecipe.Sizing.Mode>(
        ImageRecipe.Sizing.Mode.allCases.map { Term($0, imgproxy: [$0.rawValue]) })
}

extension ImageRecipe.Gravity {
    /// Whether the gravity is an edge, a corner or the centre (not smart, not a focal point).
    var isPlacement: Bool {
        switch self {
        case .center, .north, .south, .east, .west, .northEast, .northWest, .southEast, .southWest: true
        default: false
        }
    }
}
