import Foundation
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

@testable import ImageryServer

/// A thumbor.conf read as thumbor reads it: simple Python assignments, thumbor's defaults for the
/// settings left out, the rest reported.
@Suite("thumbor configuration files")
struct ThumborConfigurationTests {
    static let site = #"""
        # thumbor configuration of a site
        import os

        SECURITY_KEY = 'MY_SECURE_KEY'   # the key libthumbor signs with
        ALLOW_UNSAFE_URL = False
        QUALITY = 85
        WEBP_QUALITY = 70
        AUTO_WEBP = True
        MAX_AGE = 7 * 24 * 60 * 60
        MAX_WIDTH = 1200
        MAX_HEIGHT = 1200
        RESPECT_ORIENTATION = True
        ALLOWED_SOURCES = [
            'images.example.com',
            r'.+\.cdn\.example\.net',  # every CDN edge
            "(.*\.)?static\.example\.org",
        ]
        FILTERS = [
            'thumbor.filters.brightness',
            'thumbor.filters.watermark',
            'thumbor.filters.redeye',
        ]
        LOADER = 'thumbor.loaders.http_loader'
        RESULT_STORAGE = 'thumbor.result_storages.file_storage'
        STATSD_HOST = "statsd.local"
        PNG_COMPRESSION_LEVEL = 9
        ENABLE_ETAGS = True
        MY_OWN_SETTING = 1
        HTTP_LOADER_REQUEST_TIMEOUT = 5.5
        META_CALLBACK_NAME = None
        """#

    @Test func readsASitesFile() throws {
        var configuration = ServerConfiguration()
        let report = try ThumborConfigurationFile.apply(Self.site, to: &configuration)
        #expect(configuration.thumbor.securityKey == "MY_SECURE_KEY")
        #expect(configuration.thumbor.allowsUnsafeURLs == false)
        #expect(
            configuration.rendering.formatQualities[.jpeg] == 85 && configuration.rendering.formatQualities[.webp] == 70
                && configuration.rendering.formatQualities[.avif] == 85)
        #expect(configuration.thumbor.autoWebP)
        #expect(configuration.thumbor.maximumWidth == 1200 && configuration.thumbor.maximumHeight == 1200)
        #expect(configuration.thumbor.respectsOrientation)
        #expect(
            configuration.origins.allowedHosts == [
                "images.example.com", "*.cdn.example.net", "static.example.org", "*.static.example.org",
            ])
        #expect(configuration.thumbor.filters == ["brightness", "watermark", "red_eye"])
        #expect(configuration.origins.timeout == .milliseconds(5500))
        #expect(configuration.thumbor.metaCallback == nil)
        // Not applied, and said so.
        #expect(report.unsupported == ["PNG_COMPRESSION_LEVEL"])
        #expect(Set(report.machinery) == ["LOADER", "RESULT_STORAGE", "STATSD_HOST"])
        #expect(report.unknown == ["MY_OWN_SETTING"])
        #expect(report.unreadLines.count == 2)  // the import and MAX_AGE's arithmetic
        #expect(report.unreadLines.contains { $0.contains("MAX_AGE = 7 * 24") })
        #expect(configuration.caching.responseMaxAge == 86_400)  // MAX_AGE not read: thumbor's default
    }

    /// thumbor's own sample thumbor.conf (every line a comment): thumbor's defaults, nothing reported.
    @Test func aFileOfCommentsIsThumborsDefaults() throws {
        var configuration = ServerConfiguration()
        let report = try ThumborConfigurationFile.apply("# QUALITY = 80\n\n# AUTO_WEBP = False\n", to: &configuration)
        #expect(report == .init())
        #expect(configuration.thumbor.allowsUnsafeURLs == true && !configuration.thumbor.respectsOrientation)
        #expect(configuration.rendering.formatQualities[.jpeg] == 80 && configuration.caching.responseMaxAge == 86_400)
        #expect(configuration.thumbor.filters == ServerConfiguration.thumborDefaultFilters)
    }

    @Test(arguments: [
        ("QUALITY = 'high'", "QUALITY in the thumbor configuration must be a number"),
        ("QUALITY = 0", "QUALITY in the thumbor configuration must be from 1 to 100"),
        ("AUTO_WEBP = 'yes'", "AUTO_WEBP in the thumbor configuration must be True or False"),
        ("ALLOWED_SOURCES = ['a.com', 3]", "ALLOWED_SOURCES in the thumbor configuration must be a list of strings"),
        ("ALLOWED_SOURCES = ['^https?://(a|b)\\.com/.*$']", "is a regular expression Imagery cannot read"),
        ("MAX_WIDTH = -5", "MAX_WIDTH in the thumbor configuration must be 0 or more"),
    ])
    func refusesValuesItCannotHonour(line: String, message: String) {
        var configuration = ServerConfiguration()
        #expect {
            _ = try ThumborConfigurationFile.apply(line, to: &configuration)
        } throws: { error in
            (error as? ConfigurationFileError)?.message.contains(message) == true
        }
    }

    @Test func readsPythonLiterals() {
        let file = PythonAssignments(
            #"""
            A = 'it\'s'
            B = r'\d+\.x'
            C = (1, 2.5, -3, 75e6, True, None,)
            D = ["x",
                 'y']  # a comment
            E = u"é"
            F == 1
            G = some.call()
            H = [1, [2, 3]]
            I = ('a') + 'b'
            J = ('a',) + ['b']
            """#)
        let values = Dictionary(file.values.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
        #expect(values["A"] == .string("it's"))
        #expect(values["B"] == .string(#"\d+\.x"#))
        #expect(values["C"] == .list([.integer(1), .float(2.5), .integer(-3), .float(75e6), .boolean(true), .none]))
        #expect(values["D"] == .list([.string("x"), .string("y")]))
        #expect(values["E"] == .string("é"))
        #expect(values["H"] == .list([.integer(1), .list([.integer(2), .integer(3)])]))
        #expect(values["I"] == .string("ab"))  // a bracketed value, not a tuple; strings joined
        #expect(values["J"] == .list([.string("a"), .string("b")]))
        #expect(file.unreadLines.map(\.line) == [7, 8])
    }

    /// thumbor's documented way of adding filters: `BUILTIN_FILTERS` imported, a list added to it.
    /// The import line is recognised (nothing is run); other imports are still reported.
    @Test(arguments: [
        "from thumbor.filters import BUILTIN_FILTERS\nFILTERS = BUILTIN_FILTERS + ['thumbor.filters.autojpg']\n",
        "from thumbor.filters import BUILTIN_FILTERS  # the default list\nFILTERS = (\n    ['thumbor.filters.autojpg'] + BUILTIN_FILTERS\n)\n",
        "from thumbor.filters import BUILTIN_FILTERS\nFILTERS = BUILTIN_FILTERS + [\n    'thumbor.filters.autojpg',\n]\n",
    ])
    func readsTheBuiltInFiltersIdiom(text: String) throws {
        var configuration = ServerConfiguration()
        let report = try ThumborConfigurationFile.apply(text, to: &configuration)
        #expect(report == .init(), "\(report)")
        #expect(configuration.thumbor.filters == ServerConfiguration.thumborDefaultFilters.union(["autojpg"]))
    }

    @Test func otherImportsAndExpressionsAreStillReported() throws {
        var configuration = ServerConfiguration()
        let report = try ThumborConfigurationFile.apply(
            "from thumbor.filters import BUILTIN_FILTERS, other\nfrom os import environ\nFILTERS = BUILTIN_FILTERS + ['a'] + 3\nQUALITY = 90\n",
            to: &configuration
        )
        #expect(report.unreadLines.map { $0.prefix(7) } == ["line 1:", "line 2:", "line 3:"], "\(report.unreadLines)")
        #expect(configuration.thumbor.filters == ServerConfiguration.thumborDefaultFilters)
        #expect(configuration.rendering.formatQualities[.jpeg] == 90)
        // Without the import, the name means nothing.
        #expect(
            try ThumborConfigurationFile.apply("FILTERS = BUILTIN_FILTERS\n", to: &configuration).unreadLines.count == 1
        )
    }

    /// The settings at work: unsafe URLs refused, a larger side made MAX_WIDTH, orientation left as
    /// stored, thumbor's health check.
    @Test func theSettingsApplyToThumborURLs() async throws {
        var file = ServerConfiguration()
        _ = try ThumborConfigurationFile.apply("SECURITY_KEY = 'k'\nMAX_WIDTH = 100\n", to: &file)
        try await withServer(configure: { configuration in
            configuration.thumbor.securityKey = file.thumbor.securityKey
            configuration.thumbor.allowsUnsafeURLs = file.thumbor.allowsUnsafeURLs
            configuration.thumbor.maximumWidth = file.thumbor.maximumWidth
            configuration.thumbor.respectsOrientation = file.thumbor.respectsOrientation
        }) { client, origin in
            let image = ServerThumborTests.source(origin, "rocket-exif6.jpg")
            // ALLOW_UNSAFE_URL's default (True) with a key: both unsafe and signed URLs.
            let (status, _, body) = try await get(client, "/unsafe/300x0/\(image)")
            #expect(status == .ok)
            let decoded = try VipsImageDecoder().decode(body, recipe: ImageRecipe())
            // MAX_WIDTH: 100 wide; RESPECT_ORIENTATION's default (False): the stored portrait's proportions.
            #expect(decoded.width == 100)
            #expect(decoded.width < decoded.height)
            let signed = ThumborSigner(key: "k").signature(of: "300x0/\(image)")
            #expect(try await get(client, "/\(signed)/300x0/\(image)").status == .ok)
            let (health, _, words) = try await get(client, "/healthcheck")
            #expect(health == .ok && String(decoding: words, as: UTF8.self) == "WORKING")
        }
    }
}
