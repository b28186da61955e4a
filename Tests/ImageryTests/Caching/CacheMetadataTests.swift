import Foundation
import Testing

@testable import Imagery

/// What a data cache keeps beside its bytes, and comma-separated header lists.
@Suite("CacheMetadata and header lists")
struct CacheMetadataTests {
    static func metadata(_ headers: [String: String]?) -> CacheMetadata {
        let info = headers.map {
            HTTPResponseInfo(
                statusCode: 200, headers: $0, requestTime: HTTPFreshnessTests.t0, responseTime: HTTPFreshnessTests.t0,
                requestHeaders: [:])
        }
        return CacheMetadata(storedAt: HTTPFreshnessTests.t0, http: info)
    }

    /// The same version only by the same strong `ETag`, or (with no `ETag` on either side) the same
    /// `Last-Modified`; without validators, or with weak ones, nothing can be told.
    @Test(
        arguments: [
            (["ETag": "\"a\""], ["ETag": "\"a\""], true),
            (["ETag": "\"a\""], ["ETag": "\"b\""], false),
            (["ETag": "W/\"a\""], ["ETag": "W/\"a\""], false),
            (["ETag": "\"a\""], [:], false),
            ([:], ["ETag": "\"a\""], false),
            (["ETag": "\"a\"", "Last-Modified": "x"], ["Last-Modified": "x"], false),
            // The tag decides.
            (["ETag": "\"a\"", "Last-Modified": "x"], ["ETag": "\"a\"", "Last-Modified": "y"], true),
            (
                ["Last-Modified": "Tue, 14 Nov 2023 22:13:20 GMT"], ["Last-Modified": "Tue, 14 Nov 2023 22:13:20 GMT"],
                true
            ),
            (
                ["Last-Modified": "Tue, 14 Nov 2023 22:13:20 GMT"], ["Last-Modified": "Wed, 15 Nov 2023 22:13:20 GMT"],
                false
            ),
            (["Last-Modified": "x"], [:], false),
            ([:], [:], false),
        ] as [([String: String], [String: String], Bool)])
    func theSameVersionIsToldByItsValidators(mine: [String: String], theirs: [String: String], same: Bool) {
        #expect(Self.metadata(mine).isSameVersion(as: Self.metadata(theirs)) == same, "\(mine) vs \(theirs)")
        #expect(Self.metadata(theirs).isSameVersion(as: Self.metadata(mine)) == same, "symmetric")
    }

    @Test func metadataWithoutHTTPIsNeverKnownToBeTheSameVersion() {
        let file = Self.metadata(nil)
        #expect(!file.isSameVersion(as: file))
        #expect(!file.isSameVersion(as: Self.metadata(["ETag": "\"a\""])))
        #expect(!Self.metadata(["ETag": "\"a\""]).isSameVersion(as: file))
    }

    @Test func metadataRoundTripsThroughJSON() throws {
        var metadata = CacheMetadata(
            contentType: "image/webp", storedAt: Date(timeIntervalSince1970: 1_700_000_123.5),
            http: HTTPResponseInfo(
                statusCode: 200, headers: ["ETag": "\"e\"", "Vary": "Accept"],
                requestTime: Date(timeIntervalSince1970: 1),
                responseTime: Date(timeIntervalSince1970: 2), requestHeaders: ["Accept": "image/webp"]
            )
        )
        metadata.chosenQuality = 73
        let decoded = try JSONDecoder().decode(CacheMetadata.self, from: JSONEncoder().encode(metadata))
        #expect(decoded == metadata)
        #expect(decoded.http?.varyingRequestHeaders == ["accept": "image/webp"])
        let plain = CacheMetadata(storedAt: Date(timeIntervalSince1970: 0))
        #expect(try JSONDecoder().decode(CacheMetadata.self, from: JSONEncoder().encode(plain)) == plain)
        #expect(plain.contentType == nil && plain.http == nil && plain.chosenQuality == nil)
    }

    @Test func metadataIsStoredNowByDefault() {
        let before = Date()
        let metadata = CacheMetadata()
        #expect(metadata.storedAt >= before && metadata.storedAt <= Date())
    }

    @Test(
        arguments: [
            ("", [String]()),
            (" ", []),
            (",", []),
            (" , ,\t,", []),
            ("Accept", ["Accept"]),
            ("Accept, Accept-Encoding", ["Accept", "Accept-Encoding"]),
            ("\tAccept ,Origin\t, ", ["Accept", "Origin"]),
            ("\"a\", W/\"b\"", ["\"a\"", "W/\"b\""]),
            ("a,,b", ["a", "b"]),
            ("a b, c", ["a b", "c"]),  // spaces inside an element are kept
            ("é,ü", ["é", "ü"]),
        ] as [(String, [String])])
    func headerListsAreSplitOnCommasAndTrimmed(header: String, elements: [String]) {
        #expect(HTTPHeaderList.elements(header).map(String.init) == elements, "\(header.debugDescription)")
    }

    @Test func varyNamesAreLowerCased() {
        #expect(HTTPCachePolicy.varyNames("Accept, ACCEPT-Encoding , *") == ["accept", "accept-encoding", "*"])
        #expect(HTTPCachePolicy.varyNames(nil).isEmpty)
    }

    @Test(
        arguments: [
            ("max-age=60", ["max-age": "60"]),
            ("no-store", ["no-store": String?.none]),
            ("max-age=60,max-age=120", ["max-age": "120"]),  // the last of a repeated directive
            ("a=, b", ["a": "", "b": String?.none]),
            ("=", [:]),
            (",,,", [:]),
            ("\t MAX-AGE \t=\t 5 \t", ["max-age": "5"]),
        ] as [(String, [String: String?])])
    func cacheControlIsReadDirectiveByDirective(header: String, directives: [String: String?]) {
        #expect(HTTPCachePolicy.cacheControl(header) == directives, "\(header)")
    }
}
