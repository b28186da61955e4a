import Foundation
import Testing

@testable import Imagery

/// HTTP dates (RFC 9110 5.6.7): the IMF-fixdate every server sends now, read by hand, and the two
/// obsolete forms a recipient must still accept; anything else is no date.
@Suite("HTTPDate")
struct HTTPDateTests {
    @Test(
        arguments: [
            ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
            ("Wed, 31 Dec 1969 23:59:59 GMT", -1),
            ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777),
            ("Fri, 31 Dec 1999 23:59:59 GMT", 946_684_799),
            ("Tue, 29 Feb 2000 12:00:00 GMT", 951_825_600),  // 2000 is a leap year
            ("Thu, 29 Feb 2024 23:59:59 GMT", 1_709_251_199),
            ("Tue, 19 Jan 2038 03:14:08 GMT", 2_147_483_648),  // past 32-bit time
            ("Mon, 01 Mar 2100 00:00:00 GMT", 4_107_542_400),  // 2100 is not
            ("Mon, 01 Jan 1900 00:00:00 GMT", -2_208_988_800),
            ("Sat, 31 Dec 2016 23:59:60 GMT", 1_483_228_800),  // a leap second: the next second
        ] as [(String, Int)])
    func readsIMFFixdates(text: String, seconds: Int) {
        let date = Date(timeIntervalSince1970: TimeInterval(seconds))
        #expect(HTTPDate.parse(text) == date)
        #expect(HTTPDate.parseIMFFixdate(text) == date)
    }

    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT",  // IMF-fixdate
        "Sunday, 06-Nov-94 08:49:37 GMT",  // RFC 850 (two-digit year)
        "Sun Nov  6 08:49:37 1994",  // asctime (a day padded with a space)
        "  Sun, 06 Nov 1994 08:49:37 GMT  ",
        "  Sunday, 06-Nov-94 08:49:37 GMT ",
        " Sun Nov  6 08:49:37 1994 ",
    ])
    func readsEveryFormOfOneDate(text: String) {
        #expect(HTTPDate.parse(text) == Date(timeIntervalSince1970: 784_111_777), "\(text)")
    }

    @Test func readsAsctimeWithATwoDigitDay() {
        #expect(HTTPDate.parse("Thu Feb 29 23:59:59 2024") == Date(timeIntervalSince1970: 1_709_251_199))
    }

    @Test(arguments: [
        "", " ", "0", "-1", "yesterday", "1994-11-06T08:49:37Z", "784111777",
        "Sun, 06 Nov 1994", "Sun, 06 Nov 1994 08:49", "Sun, 06 Nov 1994 08:49:37 GMT GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT\u{0}", "Sun,\u{7}06 Nov 1994 08:49:37 GMT",
        "Sün, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT" + String(repeating: " x", count: 40),
        String(repeating: "\u{301}", count: 30), "\u{FEFF}Sun, 06 Nov 1994 08:49:37 GMT",
    ])
    func anythingElseIsNoDate(text: String) {
        #expect(HTTPDate.parse(text) == nil, "\(text.debugDescription)")
    }

    /// The hand-written reader takes exactly the 29 bytes of the form, and only values that can be.
    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37 gmt", "Sun, 06 nov 1994 08:49:37 GMT",
        "Sun 06 Nov 1994 08:49:37 GMT ", "Sun, 6 Nov 1994 08:49:37 GMT ", "Sun, 06 Nov 94 08:49:37 GMT   ",
        "Sun, 00 Nov 1994 08:49:37 GMT", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:60:00 GMT", "Sun, 06 Nov 1994 08:49:61 GMT", "Sun, 06 Nov 1994 08-49-37 GMT",
        "Sun, 06 Nov 19x4 08:49:37 GMT", "Sun, -6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT\t",
    ])
    func theIMFFixdateReaderRefusesWhatIsNotExactlyOne(text: String) {
        #expect(HTTPDate.parseIMFFixdate(text) == nil, "\(text)")
    }

    @Test func formatsIMFFixdatesThatReadBack() {
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 1_709_251_199)) == "Thu, 29 Feb 2024 23:59:59 GMT")
        var random = SeededGenerator(seed: 42)
        for _ in 0..<2_000 {
            let date = Date(
                timeIntervalSince1970: TimeInterval(Int64.random(in: -2_208_988_800...4_102_444_800, using: &random)))
            #expect(HTTPDate.parse(HTTPDate.format(date)) == date)
        }
    }

    @Test func theObsoleteFormsCanBeReadFromManyTasksAtOnce() async {
        let expected = Date(timeIntervalSince1970: 784_111_777)
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<200 {
                group.addTask {
                    let text = index % 2 == 0 ? "Sunday, 06-Nov-94 08:49:37 GMT" : "Sun Nov  6 08:49:37 1994"
                    return HTTPDate.parse(text) == expected
                        && HTTPDate.format(expected) == "Sun, 06 Nov 1994 08:49:37 GMT"
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 200 && results.allSatisfy { $0 })
    }
}
