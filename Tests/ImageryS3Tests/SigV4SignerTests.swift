import Foundation
import ImageryTestSupport
import Testing

@testable import ImageryS3

/// AWS's Signature Version 4 test suite (Tests/Fixtures/aws4_testsuite, Apache 2.0, from botocore's
/// copy): for every request, the canonical request, the string to sign and the `Authorization`
/// header must be exactly AWS's.
@Suite struct SigV4SignerTests {
    static let directory = Fixtures.directory.appendingPathComponent("aws4_testsuite")
    static let names: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
        .filter { $0.hasSuffix(".req") }.map { String($0.dropLast(4)) }.sorted()
    static let credentials = S3Credentials(
        accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")

    @Test func theSuiteIsThere() {
        #expect(Self.names.count >= 30, "Tests/Fixtures/aws4_testsuite holds the suite's requests")
    }

    @Test(arguments: names)
    func vector(_ name: String) throws {
        let request = try Self.parse(
            try String(contentsOf: Self.directory.appendingPathComponent("\(name).req"), encoding: .utf8))
        var credentials = Self.credentials
        if name == "get-vanilla-with-session-token" {
            credentials.sessionToken = "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267"
        }
        let signer = SigV4Signer(
            credentials: credentials, region: "us-east-1", service: "service", pathRule: .normalised)
        var signed = request
        if let token = credentials.sessionToken { signed.headers.append(("X-Amz-Security-Token", token)) }
        let amzDate = try #require(signed.headers.first { $0.name.lowercased() == "x-amz-date" }?.value)
        let expected = { (suffix: String) in
            try String(contentsOf: Self.directory.appendingPathComponent("\(name).\(suffix)"), encoding: .utf8)
                .trimmingCharacters(in: .newlines)
        }
        let canonical = signer.canonicalRequest(signed).text
        #expect(canonical == (try expected("creq")))
        #expect(signer.stringToSign(canonicalRequest: canonical, amzDate: amzDate) == (try expected("sts")))
        #expect(signer.authorization(for: signed, amzDate: amzDate) == (try expected("authz")))
    }

    /// The headers `signatureHeaders` adds are the ones `authorization` signs: date, token, payload hash.
    @Test func signatureHeadersSignWhatTheyAdd() throws {
        let signer = SigV4Signer(
            credentials: S3Credentials(accessKeyID: "AKID", secretAccessKey: "secret", sessionToken: "token"),
            region: "eu-west-1"
        )
        let body = Data("hello".utf8)
        let request = SigV4Signer.Request(
            method: "PUT", path: "/bucket/a b//c.jpg", headers: [("host", "127.0.0.1:8333")],
            payloadHash: SigV4Signer.payloadHash(body)
        )
        let date = Date(timeIntervalSince1970: 1_440_938_160)  // 2015-08-30T12:36:00Z
        let added = signer.signatureHeaders(for: request, date: date)
        let names = added.map(\.name)
        #expect(names == ["x-amz-date", "x-amz-security-token", "x-amz-content-sha256", "authorization"])
        #expect(added[0].value == "20150830T123600Z")
        #expect(added[2].value == "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")
        let authorization = added[3].value
        #expect(authorization.hasPrefix("AWS4-HMAC-SHA256 Credential=AKID/20150830/eu-west-1/s3/aws4_request, "))
        #expect(authorization.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,"))
        // S3 signs the key as sent: no normalisation of `//`, spaces encoded once.
        var withAdded = request
        withAdded.headers += added.dropLast()
        #expect(signer.canonicalRequest(withAdded).text.hasPrefix("PUT\n/bucket/a%20b//c.jpg\n\n"))
    }

    @Test func credentialsFromAFileAndTheEnvironment() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("credentials-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try """
        # comment
        [other]
        aws_access_key_id = NOPE
        aws_secret_access_key = nope
        [default]
        aws_access_key_id = AKID
        aws_secret_access_key = se=cret
        """.write(to: file, atomically: true, encoding: .utf8)
        #expect(try S3Credentials.fromFile(file) == S3Credentials(accessKeyID: "AKID", secretAccessKey: "se=cret"))
        #expect(throws: S3Error.self) { try S3Credentials.fromFile(file, profile: "missing") }
        #expect(throws: S3Error.self) { try S3Credentials.fromFile(file.appendingPathExtension("absent")) }
        #expect(
            S3Credentials.fromEnvironment(["AWS_ACCESS_KEY_ID": "A", "AWS_SECRET_ACCESS_KEY": "B"])
                == S3Credentials(accessKeyID: "A", secretAccessKey: "B"))
        #expect(S3Credentials.fromEnvironment(["AWS_ACCESS_KEY_ID": "A"]) == nil)
    }

    /// A `.req` file: `METHOD PATH[?QUERY] HTTP/1.1`, headers (`Name:value`, folded lines
    /// starting with spaces), a blank line, the body.
    static func parse(_ text: String) throws -> SigV4Signer.Request {
        var lines = text.components(separatedBy: "\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        let method = String(requestLine.first!)
        let target = requestLine.dropFirst().dropLast().joined(separator: " ")
        let (path, rawQuery) =
            target.firstIndex(of: "?").map { (String(target[..<$0]), String(target[target.index(after: $0)...])) } ?? (
                target, ""
            )
        var headers: [(name: String, value: String)] = []
        var bodyLines: [String] = []
        var inBody = false
        for line in lines {
            if inBody {
                bodyLines.append(line)
                continue
            }
            if line.isEmpty {
                inBody = true
                continue
            }
            if line.first == " " || line.first == "\t", !headers.isEmpty {
                headers[headers.count - 1].value += "\n" + line
                continue
            }
            let colon = try #require(line.firstIndex(of: ":"))
            headers.append((String(line[..<colon]), String(line[line.index(after: colon)...])))
        }
        let query: [(name: String, value: String)] =
            rawQuery.isEmpty
            ? []
            : rawQuery.split(separator: "&", omittingEmptySubsequences: false).map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let decode = { (part: Substring) in String(part).removingPercentEncoding ?? String(part) }
                return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
            }
        let body = Data(bodyLines.joined(separator: "\n").utf8)
        return SigV4Signer.Request(
            method: method, path: path.removingPercentEncoding ?? path, query: query, headers: headers,
            payloadHash: SigV4Signer.payloadHash(body)
        )
    }
}
