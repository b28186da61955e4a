import Foundation
import Imagery
import ImageryServer

/// thumbor's and imgproxy's URL paths as the server reads them (``PathDialects``): which syntax a
/// path is, its parameters, its signature. Input: the path.
enum PathsTarget {
    static let maximumSide = 8192

    /// Both syntaxes unsigned, and both signed; the same imgproxy presets and watermarks.
    static let unsigned = dialects(signed: false)
    static let signed = dialects(signed: true)

    static func dialects(signed: Bool) -> PathDialects {
        var configuration = ServerConfiguration()
        configuration.imgproxy.presets = ["thumb": "rs:fill:100:100/q:70", "loop": "pr:loop/w:10"]
        if signed {
            configuration.thumbor.securityKey = "fuzz-key"
            configuration.imgproxy.keys = ["0123456789abcdef", "ff"]
            configuration.imgproxy.salts = ["fedcba9876543210", "00"]
        }
        return try! PathDialects(configuration: configuration, watermarks: ["logo": "logo-1"])
    }

    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        let path = Substring("/" + String(decoding: bytes, as: UTF8.self))
        guard let syntax = unsigned.syntax(of: path) else {
            try require(signed.syntax(of: path) == nil, "\(path): a syntax only when signed")
            return
        }
        let plain = try outcome(unsigned, path, syntax)
        // Signed with the configured key: never refused for its signature, and otherwise answered as
        // unsigned (where unsigned was not refused for its own signature); one changed character: 403.
        guard let signedPath = signed.signing(path, in: syntax) else {  // nothing after the signature to sign
            try require(plain == 400, "\(path): cannot be signed, yet answered \(plain)")
            return
        }
        try require(signed.syntax(of: Substring(signedPath)) == syntax, "\(signedPath): another syntax once signed")
        let withKey = try outcome(signed, Substring(signedPath), syntax)
        try require(withKey != 403, "\(signedPath): its own signature refused")
        if plain != 403 { try require(withKey == plain, "\(path): \(plain) unsigned, \(withKey) signed") }
        var changed = Array(signedPath.utf8)
        changed[2] = changed[2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let tampered = Substring(String(decoding: changed, as: UTF8.self))
        if signed.syntax(of: tampered) == syntax {
            try require(try outcome(signed, tampered, syntax) == 403, "\(tampered): a changed signature accepted")
        }
    }

    /// 200 when parsed (its parameters checked), else the refusal's status (400, 403 or 404, with a message).
    static func outcome(_ dialects: PathDialects, _ path: Substring, _ syntax: PathDialects.Syntax) throws(FuzzFailure)
        -> Int
    {
        let parameters: ImageParameters
        do {
            parameters = try dialects.parameters(path, in: syntax)
        } catch {
            let answer = ServerError.from(error)
            let status = Int(answer.status.code)
            try require([400, 403, 404].contains(status), "\(path) answered \(answer)")
            try require(answer.code != "internal" && !answer.message.isEmpty, "\(path) answered \(answer)")
            return status
        }
        try require(parameters.quality.map((1...100).contains) ?? true, "\(path): q out of range")
        let recipe = parameters.recipe
        if let resize = recipe.resize {
            try require(
                (1...maximumSide).contains(resize.width) && (1...maximumSide).contains(resize.height),
                "\(path): resize \(resize)")
        }
        try require(recipe.blur.map((0.3...100).contains) ?? true, "\(path): blur \(recipe)")
        try require(recipe.sharpen.map((0.3...10).contains) ?? true, "\(path): sharpen \(recipe)")
        // On any source the recipe lays out within the output limit, or is refused as a bad parameter.
        for (width, height) in [(1, 1), (640, 427), (3000, 17)] {
            switch Result(catching: {
                try recipe.layout(sourceWidth: width, sourceHeight: height, maximumSide: maximumSide)
            }) {
            case .success(let layout):
                try require(
                    (1...maximumSide).contains(layout.outputWidth) && (1...maximumSide).contains(layout.outputHeight),
                    "\(path): \(recipe) on \(width)x\(height) gave \(layout.outputWidth)x\(layout.outputHeight)"
                )
            case .failure(let error):
                try require(
                    ServerError.from(error).status == .badRequest, "\(path): \(recipe) on \(width)x\(height): \(error)")
            }
        }
        for adjustment in recipe.adjustments {
            try require(
                adjustment.problem == nil,
                "\(path): accepted \(adjustment), which a processor refuses: \(adjustment.problem ?? "")")
        }
        for url in recipe.linkedSources {
            try require(
                (try? SourceGuard.endpoint(of: url)) != nil, "\(path): a watermark or frame \(url) with no endpoint")
        }
        // thumbor's meta/ on any source: JSON.
        for (width, height) in [(1, 1), (640, 427), (3000, 17)] {
            if let json = PathDialects.thumborMetaJSON(path, sourceWidth: width, sourceHeight: height) {
                try require(
                    (try? JSONSerialization.jsonObject(with: Data(json.utf8))) != nil,
                    "\(path): meta on \(width)x\(height) is no JSON: \(json)")
            }
        }
        do {
            _ = try SourceGuard.endpoint(of: parameters.url)
        } catch {
            throw FuzzFailure("\(path): url \(parameters.url) accepted with no endpoint")
        }
        return 200
    }
}
