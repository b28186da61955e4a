import Foundation
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryServer
import ImageryTestSupport
import ImageryVips
import Testing

/// The recipe's parameters on `/image`: sizes, geometry, effects, and one message per bad value.
@Suite("Image proxy recipes")
struct ServerRecipeTests {
    /// rocket.jpg is 640x427; rocket-exif6.jpg displays the same; chelsea.png is 451x300.
    @Test(arguments: [
        ("rocket.jpg", "w=100&dpr=2", 200, 133),
        ("rocket.jpg", "w=100&h=100&dpr=3", 300, 300),
        ("rocket.jpg", "w=100&h=100&dpr=4&fit=inside", 400, 267),
        ("rocket.jpg", "w=1000&h=1000", 640, 427),
        ("rocket.jpg", "w=1000&h=1000&enlarge=1", 1000, 1000),
        ("rocket.jpg", "w=1000&h=1000&fit=outside&enlarge=true", 1499, 1000),
        ("rocket.jpg", "w=200&h=100&gravity=north", 200, 100),
        ("rocket.jpg", "w=200&h=100&gravity=0.1,0.9", 200, 100),
        ("rocket.jpg", "w=150&h=150&gravity=smart", 150, 150),
        ("rocket.jpg", "w=150&h=150&gravity=entropy", 150, 150),
        ("rocket.jpg", "crop=10,20,300,200", 300, 200),
        ("rocket.jpg", "crop=0.25,0.25,0.5,0.5&w=100", 100, 67),
        ("rocket.jpg", "crop=200,100&gravity=southeast", 200, 100),
        ("rocket.jpg", "crop=600,0,100,100", 40, 100),
        ("rocket.jpg", "rotate=90&w=200", 200, 300),
        ("rocket-exif6.jpg", "rotate=270&flip=1&flop=1&w=100&h=50", 100, 50),
        ("rocket-exif6.jpg", "w=320", 320, 214),
        ("rocket.jpg", "w=100&h=100&pad=10,20", 140, 120),
        ("rocket.jpg", "w=100&h=100&pad=1,2,3,4&dpr=2", 212, 208),
        ("rocket.jpg", "w=200&blur=2&sharpen=1&grayscale=1", 200, 133),
        ("chelsea.png", "w=200&h=200&fit=contain&bg=ff000080&format=png", 200, 200),
        ("chelsea.png", "trim=10&w=100", 100, 67),
    ])
    func eachParameterShapesTheOutput(source: String, query: String, width: Int, height: Int) async throws {
        try await withServer { client, origin in
            try await client.execute(uri: imageURI(origin, source, query), method: .get) { response in
                #expect(response.status == .ok, "\(query): \(String(buffer: response.body))")
                let image = try VipsImageDecoder().decode(response.data, thumbnail: nil)
                #expect((image.width, image.height) == (width, height), "\(query): \(image.width)x\(image.height)")
                if query.contains("grayscale") { #expect(image.pixelFormat == .gray8) }
                if query.contains("bg=ff000080") { #expect(image.pixelFormat == .rgba8) }
            }
        }
    }

    /// Every bad value: a 400 that names the parameter and what it accepts.
    @Test(arguments: [
        ("dpr=0", "dpr must be a number from 1 to 4"), ("dpr=5", "dpr must be"), ("dpr=nan", "dpr must be"),
        ("dpr=1e1", "dpr must be"),
        ("enlarge=yes", "enlarge must be true or false"), ("gravity=up", "gravity must be center, north"),
        ("gravity=0.5", "gravity must be"), ("gravity=1.5,0.5", "gravity must be"),
        ("crop=1,2,3", "crop must be X,Y,WIDTH,HEIGHT"), ("crop=0,0,0,10", "crop must be"),
        ("crop=-1,0,10,10", "crop must be"),
        ("crop=0,0,1.5,0.5", "crop must be"), ("crop=a,b", "crop must be"),
        ("trim=-1", "trim must be a number from 0 to 255"), ("trim=300", "trim must be"),
        ("rotate=45", "rotate must be one of 0, 90, 180, 270"), ("flip=2", "flip must be true or false"),
        ("flop=x", "flop must be"),
        ("pad=1,2,3", "pad must be 1, 2 or 4 whole numbers"), ("pad=-1", "pad must be"),
        ("bg=red", "bg must be a hex colour"), ("bg=12345", "bg must be"),
        ("blur=0", "blur must be a number from 0.3 to 100"), ("blur=101", "blur must be"),
        ("sharpen=11", "sharpen must be a number from 0.3 to 10"), ("grayscale=maybe", "grayscale must be"),
        ("fit=squash", "fit must be one of auto, contain, cover, cover-down, fill, inside, outside"),
        ("format=svg", "format must be one of avif, bmp, gif, heic, ico, jpeg, jpg, jxl, png, tiff, webp"),
        ("lossless=2", "lossless must be true or false"),
        ("progressive=on", "progressive must be"), ("max_bytes=0", "max_bytes must be a whole number, 1 or more"),
        // Combinations that do not fit the image (640x427) or the output limit.
        ("crop=640,0,10,10", "starts outside the 640x427 image"),
        ("crop=0,500,10,10", "starts outside"),
        ("w=4000&h=4000&fit=contain&pad=200", "over the limit"),
    ])
    func badParametersAre400AndSayWhy(query: String, message: String) async throws {
        try await withServer(configure: { $0.limits.maximumOutputSide = 4096 }) { client, origin in
            try await client.execute(uri: imageURI(origin, "rocket.jpg", query), method: .get) { response in
                #expect(response.status == .badRequest, "\(query)")
                #expect(response.errorBody?.error == "bad_parameter", "\(query)")
                #expect(
                    response.errorBody?.message.contains(message) == true,
                    "\(query): \(String(describing: response.errorBody))")
            }
        }
    }

    /// Two spellings of one recipe are one variant: one decode, one ETag.
    @Test func spellingsOfOneRecipeShareADecodeAndAnETag() async throws {
        try await withServer { client, origin in
            let first = try await client.execute(
                uri: imageURI(origin, "rocket.jpg", "w=200&h=100&fit=cover"), method: .get
            ) { $0.headers[.eTag] }
            let second = try await client.execute(
                uri: imageURI(origin, "rocket.jpg", "gravity=center&h=100&w=200&enlarge=0"), method: .get
            ) {
                $0.headers[.eTag]
            }
            #expect(first != nil && first == second)
            let other = try await client.execute(
                uri: imageURI(origin, "rocket.jpg", "w=200&h=100&gravity=north"), method: .get
            ) { $0.headers[.eTag] }
            #expect(other != first)
            let metrics = try await client.execute(uri: "/metrics", method: .get) {
                Metric.parse(String(buffer: $0.body))
            }
            // rocket.jpg at 1/2 for both crops: the second variant comes from the kept base, not a decode.
            #expect(metrics[#"imagery_decode_duration_seconds_count{result="ok"}"#] == 1)
        }
    }

    /// The output parameters: JPEG XL asked for or negotiated, lossless, progressive, a byte limit,
    /// the configured quality per format.
    @Test func outputParametersShapeTheBytes() async throws {
        try await withServer(configure: { $0.rendering.formatQualities[.jpeg] = 30 }) { client, origin in
            try await client.execute(uri: imageURI(origin, "rocket.jpg", "w=200&format=jxl"), method: .get) {
                response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "image/jxl")
                #expect(ImageFormat(sniffing: response.data) == .jxl)
            }
            try await client.execute(
                uri: imageURI(origin, "rocket.jpg", "w=200"), method: .get,
                headers: [.accept: "image/jxl,image/*;q=0.8"]
            ) { response in
                #expect(response.headers[.contentType] == "image/jxl")
                #expect(response.headers[.vary] == "Accept")
            }
            let lossless = try await client.execute(
                uri: imageURI(origin, "chelsea.png", "w=100&format=webp&lossless=1"), method: .get
            ) { $0.data }
            let lossy = try await client.execute(
                uri: imageURI(origin, "chelsea.png", "w=100&format=webp"), method: .get
            ) { $0.data }
            #expect(lossless.count > lossy.count)
            try await client.execute(
                uri: imageURI(origin, "rocket.jpg", "w=200&format=jpeg&progressive=1"), method: .get
            ) { response in
                #expect(zip(response.data, response.data.dropFirst()).contains { $0 == 0xFF && $1 == 0xC2 })
            }
            // The configured JPEG quality (30) is the default; q overrides it.
            let configured = try await client.execute(
                uri: imageURI(origin, "rocket.jpg", "w=300&format=jpeg"), method: .get
            ) { $0.data.count }
            let asked = try await client.execute(
                uri: imageURI(origin, "rocket.jpg", "w=300&format=jpeg&q=90"), method: .get
            ) { $0.data.count }
            #expect(asked > 2 * configured)
            try await client.execute(
                uri: imageURI(origin, "rocket.jpg", "w=300&format=jpeg&q=90&max_bytes=6000"), method: .get
            ) { response in
                #expect(response.status == .ok)
                #expect(response.data.count <= 6000 && response.data.count > 1000)
            }
        }
    }

    /// `profile=keep` writes the source's ICC profile with the output; by default outputs carry none.
    @Test func aProfileIsKeptOnRequest() async throws {
        try await withServer { client, origin in
            let decoder = VipsImageDecoder()
            for (query, profile) in [
                ("w=200&format=png", false), ("w=200&format=png&profile=keep", true),
                ("w=200&format=jpeg&profile=keep", true),
            ] {
                try await client.execute(uri: imageURI(origin, "Colour/rocket-p3.jpg", query), method: .get) {
                    response in
                    #expect(response.status == .ok)
                    let header = try decoder.inspect(response.data)
                    #expect((header.profile?.contains("P3") ?? false) == profile, "\(query)")
                }
            }
            try await client.execute(uri: imageURI(origin, "rocket.jpg", "profile=p3"), method: .get) {
                #expect($0.status == .badRequest)
            }
        }
    }

    /// A request written exactly as one before is answered from result storage without being parsed
    /// again; its text is the key, so another `Accept` or another signature is another request.
    @Test func aRepeatedRequestIsTheSameAnswerAndItsTextIsTheKey() async throws {
        try await withServer(configure: { $0.requests.signingKey = "k" }) { client, origin in
            let signer = RequestSigner(key: "k")
            let query = String(imageURI(origin, "rocket.jpg", "w=120").dropFirst("/image?".count))
            let signed = "/image?" + signer.sign(query: query)
            var tags: [String?] = []
            for accept in ["image/webp,*/*", "image/webp,*/*", "image/jpeg", "image/jpeg"] {
                try await client.execute(uri: signed, method: .get, headers: [.accept: accept]) { response in
                    #expect(response.status == .ok)
                    #expect(
                        response.headers[.contentType] == (accept.hasPrefix("image/webp") ? "image/webp" : "image/jpeg")
                    )
                    #expect(response.headers[.vary] == "Accept")
                    tags.append(response.headers[.eTag])
                }
            }
            #expect(tags[0] == tags[1] && tags[2] == tags[3] && tags[0] != tags[2])
            // The same query with another signature is still checked.
            try await client.execute(uri: "/image?" + query + "&sig=AAAA", method: .get) {
                #expect($0.status == .forbidden)
            }
        }
    }
}
