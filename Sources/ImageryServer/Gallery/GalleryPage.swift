import Foundation

/// The HTML of `/`: a grid of thumbnails, each an `<img>` of `/image` (signed
/// when the server requires signatures) linking to the original.
struct GalleryPage {
    let gallery: Gallery
    let signer: RequestSigner?
    /// Thumbnail box, in CSS pixels; `srcset` asks for twice that on dense screens.
    var side = 240

    func html() -> String {
        var items: [(title: String, source: String, original: String)] = gallery.urls.map { url in
            (
                url.lastPathComponent.isEmpty ? url.host ?? url.absoluteString : url.lastPathComponent,
                url.absoluteString, url.absoluteString
            )
        }
        for name in gallery.fileNames() {
            let path = Gallery.filePrefix + Self.percentEncoded(name, allowing: Self.unreserved)
            items.append((name, Gallery.filePrefix + name, path))
        }
        let figures = items.map { item in
            """
                <figure>
                  <a href="\(Self.escaped(item.original))"><img src="\(Self.escaped(imageURL(item.source, side)))" \
            srcset="\(Self.escaped(imageURL(item.source, side * 2))) 2x" width="\(side)" height="\(side)" alt="\(Self.escaped(item.title))"></a>
                  <figcaption>\(Self.escaped(item.title))</figcaption>
                </figure>
            """
        }
        let empty = """
                <p class="empty">No images to show. Start the server with <code>--gallery-dir DIR</code> (the images in DIR)
                or <code>--gallery-url URL</code> (repeatable), then reload.</p>
            """
        return """
            <!doctype html>
            <html lang="en">
            <head>
              <meta charset="utf-8">
              <meta name="viewport" content="width=device-width, initial-scale=1">
              <title>Imagery gallery</title>
              <style>
                body { margin: 0; padding: 24px; font: 14px/1.4 system-ui, sans-serif; background: #16181d; color: #e6e6e6; }
                h1 { font-size: 20px; font-weight: 600; margin: 0 0 4px; }
                header p { margin: 0 0 20px; color: #9aa0a6; }
                code { background: #262a33; padding: 1px 5px; border-radius: 4px; }
                main { display: grid; grid-template-columns: repeat(auto-fill, \(side)px); gap: 16px; }
                figure { margin: 0; background: #1f2229; border-radius: 8px; overflow: hidden; }
                img { display: block; width: \(side)px; height: \(side)px; object-fit: cover; background: #2b2f38; }
                figcaption { padding: 6px 10px; color: #b8bcc4; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
              </style>
            </head>
            <body>
              <header>
                <h1>Imagery</h1>
                <p>\(items.count) image\(items.count == 1 ? "" : "s"), each a <code>\(side)×\(side)</code> thumbnail \
            (<code>/image?url=…&amp;w=\(side)&amp;h=\(side)&amp;fit=cover</code>); select one for the original.</p>
              </header>
              <main>
            \(items.isEmpty ? empty : figures.joined(separator: "\n"))
              </main>
            </body>
            </html>

            """
    }

    /// `/image?url=...&w=&h=&fit=cover`, signed if the server needs it.
    private func imageURL(_ source: String, _ side: Int) -> String {
        let query = "url=\(Self.percentEncoded(source, allowing: Self.unreserved))&w=\(side)&h=\(side)&fit=cover"
        return "/image?" + (signer?.sign(query: query) ?? query)
    }

    /// RFC 3986 unreserved characters (ASCII only: `CharacterSet.alphanumerics` has every script's letters).
    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    private static func percentEncoded(_ text: String, allowing allowed: CharacterSet) -> String {
        text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// Text safe in HTML content and in double- or single-quoted attributes.
    static func escaped(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }
}
