import Foundation
import Imagery

/// A nine-patch image (Android's): inside a one-pixel border, opaque black marks on the top row and
/// the left column say which columns and rows stretch; on the bottom row and the right column, where
/// the content goes (the padding is what they leave out).
struct NinePatch {
    let width: Int
    let height: Int
    /// Whether each column (1..<width-1) stretches, and each row.
    let stretchyColumns: [Bool]
    let stretchyRows: [Bool]
    let padding: (left: Int, top: Int, right: Int, bottom: Int)

    /// - Parameter image: RGBA, 8 bits, at least 3 × 3.
    init(_ image: Image) {
        (width, height) = (image.width, image.height)
        func marked(_ x: Int, _ y: Int) -> Bool {
            let offset = image.pixels.startIndex + (y * image.width + x) * 4
            return image.pixels[offset] == 0 && image.pixels[offset + 1] == 0 && image.pixels[offset + 2] == 0
                && image.pixels[offset + 3] == 255
        }
        stretchyColumns = (0..<image.width).map { $0 > 0 && $0 < image.width - 1 && marked($0, 0) }
        stretchyRows = (0..<image.height).map { $0 > 0 && $0 < image.height - 1 && marked(0, $0) }
        let inner = (1..<(image.width - 1))
        let innerRows = (1..<(image.height - 1))
        let left = inner.first { marked($0, image.height - 1) }.map { $0 - 1 } ?? 0
        let right = inner.reversed().first { marked($0, image.height - 1) }.map { image.width - 2 - $0 } ?? 0
        let top = innerRows.first { marked(image.width - 1, $0) }.map { $0 - 1 } ?? 0
        let bottom = innerRows.reversed().first { marked(image.width - 1, $0) }.map { image.height - 2 - $0 } ?? 0
        padding = (left, top, right, bottom)
    }

    /// Runs of columns (or rows) of one stretchiness, inside the border: (start, length, stretchy).
    private static func runs(_ stretchy: [Bool]) -> [(start: Int, length: Int, stretchy: Bool)] {
        var runs: [(start: Int, length: Int, stretchy: Bool)] = []
        var start = 1
        while start < stretchy.count - 1 {
            var end = start + 1
            while end < stretchy.count - 1, stretchy[end] == stretchy[start] { end += 1 }
            runs.append((start, end - start, stretchy[start]))
            start = end
        }
        return runs
    }

    /// Each cell's rectangle in the nine-patch and where it goes on a `targetWidth` × `targetHeight`
    /// image (thumbor's sizes: fixed runs as they are, stretchy ones sharing what is left, rounded; a cell
    /// that would not fit is left out).
    func cells(targetWidth: Int, targetHeight: Int) -> [(source: ImageRecipe.Rect, target: ImageRecipe.Rect)] {
        let columns = Self.runs(stretchyColumns)
        let rows = Self.runs(stretchyRows)
        let stretchyWidth = columns.filter(\.stretchy).reduce(0) { $0 + $1.length }
        let stretchyHeight = rows.filter(\.stretchy).reduce(0) { $0 + $1.length }
        let spareWidth = max(0, targetWidth - (width - 2 - stretchyWidth))
        let spareHeight = max(0, targetHeight - (height - 2 - stretchyHeight))
        func size(_ run: (start: Int, length: Int, stretchy: Bool), _ stretchyTotal: Int, _ spare: Int) -> Int {
            run.stretchy ? Int(Double(run.length) / Double(stretchyTotal) * Double(spare) + 0.5) : run.length
        }
        var cells: [(source: ImageRecipe.Rect, target: ImageRecipe.Rect)] = []
        var y = 0
        for row in rows {
            let rowHeight = size(row, stretchyHeight, spareHeight)
            var x = 0
            for column in columns {
                let columnWidth = size(column, stretchyWidth, spareWidth)
                if x + columnWidth <= targetWidth, y + rowHeight <= targetHeight {
                    cells.append(
                        (
                            ImageRecipe.Rect(x: column.start, y: row.start, width: column.length, height: row.length),
                            ImageRecipe.Rect(x: x, y: y, width: columnWidth, height: rowHeight)
                        ))
                }
                x += columnWidth
            }
            y += rowHeight
        }
        return cells
    }
}
