import Foundation
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryServer
import ImageryTestSupport
import ImageryVips
import Testing

/// Named parameter sets, composable with a request's own, and the only-presets mode.
@Suite("Presets")
struct PresetTests {
    static let presets = ["thumb": "w=100&h=100&format=png", "wide": "w=300&h=100", "grey": "grayscale=1"]

    @Test func aPresetStandsForItsParametersAndTheRequestOverridesThem() async throws {
        try await withServer(configure: { $0.requests.presets = Self.presets }) { client, origin in
            func image(_ query: String) async throws -> (Image, String?) {
                try await client.execute(uri: imageURI(origin, "rocket.jpg", query), method: .get) { response in
                    #expect(response.status == .ok, "\(query): \(String(buffer: response.body))")
                    return (
                        try VipsImageDecoder().decode(response.data, thumbnail: nil), response.headers[.contentType]
                    )
                }
            }
            let (thumb, type) = try await image("preset=thumb")
            #expect((thumb.width, thumb.height) == (100, 100) && type == "image/png")
            let (overridden, _) = try await image("preset=thumb&w=50")
            #expect((overridden.width, overridden.height) == (50, 100))
            let (both, _) = try await image("preset=wide,grey")
            #expect((both.width, both.height) == (300, 100) && both.pixelFormat == .gray8)
            // A preset and the same parameters spelled out are one variant: one ETag.
            let viaPreset = try await client.execute(uri: imageURI(origin, "rocket.jpg", "preset=wide"), method: .get) {
                $0.headers[.eTag]
            }
            let spelled = try await client.execute(uri: imageURI(origin, "rocket.jpg", "h=100&w=300"), method: .get) {
                $0.headers[.eTag]
            }
            #expect(viaPreset != nil && viaPreset == spelled)
            try await client.execute(uri: imageURI(origin, "rocket.jpg", "preset=nope"), method: .get) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorBody?.message.contains("one of grey, thumb, wide") == true)
            }
        }
    }

    @Test func onlyPresetsRefusesEveryOtherParameter() async throws {
        try await withServer(configure: {
            $0.requests.presets = Self.presets
            $0.requests.onlyPresets = true
        }) { client, origin in
            try await client.execute(uri: imageURI(origin, "rocket.jpg", "preset=thumb"), method: .get) {
                #expect($0.status == .ok)
            }
            for query in ["preset=thumb&w=50", "w=100", "", "preset=thumb&format=webp"] {
                try await client.execute(uri: imageURI(origin, "rocket.jpg", query), method: .get) { response in
                    #expect(response.status == .badRequest, "\(query)")
                    #expect(
                        response.errorBody?.message.contains("preset") == true,
                        "\(query): \(String(describing: response.errorBody))")
                }
            }
        }
    }

    @Test(arguments: [
        (#"{"presets": {"bad name": "w=1"}}"#, "presets: bad name is not a preset name"),
        (#"{"presets": {"a": "w=0"}}"#, "requests.presets (presets, config.json): a: w must be"),
        (#"{"presets": {"a": "url=http://x/"}}"#, "presets: a cannot set url"),
        (#"{"onlyPresets": true}"#, "requests.onlyPresets (onlyPresets, config.json): needs at least one preset"),
    ])
    func aBadPresetIsRefusedByName(json: String, message: String) throws {
        #expect {
            _ = try ServerConfiguration(json: Data(json.utf8), name: "config.json")
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    /// A configured watermark by name, with a preset that uses it; an unknown name is a 400.
    @Test func watermarksByNameAlsoInPresets() async throws {
        try await withTemporaryDirectory { directory in
            let mark = directory.appendingPathComponent("logo.png")
            let red = GeneratedImages.image(width: 100, height: 50) { _, _ in [255, 0, 0, 255] }
            try VipsImageEncoder().encode(red, as: .png).write(to: mark)
            try await withServer(configure: {
                $0.rendering.watermarkFiles = ["logo": mark]
                $0.requests.presets = [
                    "branded": "w=200&watermark=logo&watermark_scale=0.5&watermark_gravity=northwest"
                ]
            }) { client, origin in
                for query in [
                    "w=200&format=png&watermark=logo&watermark_scale=0.5&watermark_gravity=northwest",
                    "preset=branded&format=png",
                ] {
                    let image = try await client.execute(uri: imageURI(origin, "rocket.jpg", query), method: .get) {
                        response in
                        #expect(response.status == .ok, "\(query): \(String(buffer: response.body))")
                        return try VipsImageDecoder().decode(response.data, thumbnail: nil)
                    }
                    // 200x133: the mark's longer side is half of 133, in the top-left corner.
                    #expect(GeneratedImages.pixel(image, 10, 10) == [255, 0, 0], "\(query)")
                    #expect(GeneratedImages.pixel(image, 150, 100) != [255, 0, 0], "\(query)")
                }
                // Text, with a colour: red letters on the image, nothing but them changed in the corner.
                let text = try await client.execute(
                    uri: imageURI(
                        origin, "rocket.jpg",
                        "w=200&format=png&watermark_text=Imagery&watermark_color=ff0000&watermark_gravity=northwest&watermark_scale=0.5"
                    ),
                    method: .get
                ) { response in
                    #expect(response.status == .ok, "\(String(buffer: response.body))")
                    return try VipsImageDecoder().decode(response.data, thumbnail: nil)
                }
                let plain = try await client.execute(
                    uri: imageURI(origin, "rocket.jpg", "w=200&format=png"), method: .get
                ) {
                    try VipsImageDecoder().decode($0.data, thumbnail: nil)
                }
                func red(_ image: Image) -> Int {
                    GeneratedImages.count(image) { $0[0] > 200 && $0[1] < 60 && $0[2] < 60 }
                }
                #expect(red(text) > red(plain) + 100, "red letters: \(red(text)) red pixels, \(red(plain)) without")
                for query in [
                    "watermark=nope", "watermark_opacity=0.5", "watermark=logo&watermark_gravity=smart",
                    "watermark=logo&watermark_offset=1",
                    "watermark_font=sans", "watermark_color=fff", "watermark=logo&watermark_text=hi",
                    "watermark_text=hi&watermark_font=sans%209999",
                    "watermark_text=", "watermark_text=hi&watermark_color=red",
                ] {
                    try await client.execute(uri: imageURI(origin, "rocket.jpg", query), method: .get) { response in
                        #expect(response.status == .badRequest, "\(query)")
                        #expect(response.errorBody?.message.contains("watermark") == true, "\(query)")
                    }
                }
            }
        }
    }
}
