import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

@testable import ImageryServer

/// imgproxy's own test tables (Tests/Fixtures/imgproxy-conformance/cases.tsv: the request paths,
/// settings and expected statuses and sizes of its processing, parser, path and signature tests),
/// each sent black-box to the server over HTTP with imgproxy's settings read as `IMGPROXY_*`
/// variables, `local:///` sources from imgproxy's test images (../shared/imgproxy-testdata: not
/// committed, so the suite runs where it is present, as in CI).
@Suite("imgproxy's own test tables", .enabled(if: ImgproxyConformance.testdata != nil))
struct ImgproxyConformanceTests {
    @Test func everyCaseWhoseSettingsCanBeGivenPasses() async throws {
        let testdata = try #require(ImgproxyConformance.testdata)
        let cases = try ImgproxyConformance.cases()
        var results = ImgproxyConformance.Results()
        // One server per set of settings (most cases share one).
        for (settings, group) in Dictionary(grouping: cases, by: \.settings).sorted(by: { $0.key < $1.key }) {
            var configuration = ServerConfiguration()
            var environment = ImgproxyConformance.environment(settings, testdata: testdata)
            environment["IMGPROXY_LOCAL_FILESYSTEM_ROOT"] = testdata.path
            let report: ImgproxyEnvironment.Report
            do {
                report = try ImgproxyEnvironment.apply(environment, to: &configuration)
            } catch {
                group.forEach { results.leftOut($0, "settings refused: \(error)") }
                continue
            }
            let unsupported = report.unsupported + report.unknown
            guard unsupported.isEmpty else {
                group.forEach {
                    results.leftOut($0, "settings not honoured here: \(unsupported.joined(separator: ", "))")
                }
                continue
            }
            let signatureCases = group.filter { $0.kind == "signature-unit" }
            group.filter(\.missingFixture).forEach {
                results.leftOut($0, "its source image is not in imgproxy's repository (test-images)")
            }
            let requestCases = group.filter { $0.kind != "signature-unit" && !$0.missingFixture }
            for testCase in signatureCases {
                results.record(testCase, ImgproxyConformance.checkSignature(testCase, configuration))
            }
            guard !requestCases.isEmpty else { continue }
            let chosen = configuration
            let outcomes = try await ImgproxyConformance.run(requestCases, configuration: chosen)
            for (testCase, problem) in outcomes { results.record(testCase, problem) }
        }
        print(results.summary)
        // Every case passes but the known gaps, and every known gap still fails (else it leaves the list).
        let gaps = try ImgproxyConformance.gaps()
        for (id, problem) in results.failures where gaps[id] == nil {
            Issue.record("\(id): \(problem)")
        }
        let failed = Set(results.failures.map(\.0))
        for id in gaps.keys.sorted() where !failed.contains(id) {
            Issue.record("\(id) is listed in gaps.tsv (\(gaps[id]!)) but no longer fails: remove it from the list")
        }
        // The table is read whole: a parser that dropped rows would pass by testing nothing.
        #expect(results.total == cases.count && cases.count >= 600)
    }
}

enum ImgproxyConformance {
    /// ../shared/imgproxy-testdata, when present.
    static let testdata: URL? = {
        let directory = Fixtures.directory.deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("shared/imgproxy-testdata")
        return FileManager.default.fileExists(atPath: directory.appendingPathComponent("geometry.png").path)
            ? directory : nil
    }()

    struct Case: Sendable {
        let id: String
        let kind: String
        let settings: String
        let path: String
        let status: Int
        let width: Int?
        let height: Int?
        /// libvips' interpretation of the output (`srgb`, `b-w`, `rgb16`, `grey16`), when the case checks it.
        let interpretation: String?
        /// Whether its source image is not among imgproxy's test images (its note says `MISSING FIXTURE`).
        let missingFixture: Bool
    }

    static func cases() throws -> [Case] {
        let file = Fixtures.directory.appendingPathComponent("imgproxy-conformance/cases.tsv")
        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").dropFirst().filter {
            !$0.hasPrefix("#")
        }
        return try lines.map { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 9, let status = Int(fields[4]) else {
                throw ConformanceError("malformed row: \(line)")
            }
            let interpretation = fields[7] == "-" || fields[7] == "multiband" ? nil : fields[7]
            return Case(
                id: fields[0], kind: fields[1], settings: fields[2], path: fields[3], status: status,
                width: Int(fields[5]), height: Int(fields[6]), interpretation: interpretation,
                missingFixture: fields[8].contains("MISSING FIXTURE")
            )
        }
    }

    /// The cases known not to pass yet (gaps.tsv), with why.
    static func gaps() throws -> [String: String] {
        let file = Fixtures.directory.appendingPathComponent("imgproxy-conformance/gaps.tsv")
        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }
            .dropFirst()
        return Dictionary(
            uniqueKeysWithValues: lines.map { line in
                let fields = line.split(separator: "\t", maxSplits: 1)
                return (String(fields[0]), fields.count > 1 ? String(fields[1]) : "")
            })
    }

    /// `IMGPROXY_NAME=value ...` (split at the first `=`), `{testdata}` replaced.
    static func environment(_ settings: String, testdata: URL) -> [String: String] {
        guard settings != "-" else { return [:] }
        var environment: [String: String] = [:]
        for pair in settings.split(separator: " ") {
            guard let equals = pair.firstIndex(of: "=") else { continue }
            environment[String(pair[..<equals])] = String(pair[pair.index(after: equals)...]).replacingOccurrences(
                of: "{testdata}", with: testdata.path)
        }
        return environment
    }

    /// A signature row (`/SIGNATURE/asd`): whether the configured keys take it.
    static func checkSignature(_ testCase: Case, _ configuration: ServerConfiguration) -> String? {
        let parts = testCase.path.dropFirst().split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return "malformed signature row" }
        let signer = ImgproxySigner(
            keys: configuration.imgproxy.keys, salts: configuration.imgproxy.salts,
            size: configuration.imgproxy.signatureSize)
        let valid =
            configuration.imgproxy.trustedSignatures.contains(String(parts[0]))
            || (signer?.isValid(parts[0], for: "/" + parts[1]) ?? false)
        return valid == (testCase.status == 200)
            ? nil : "signature \(valid ? "accepted" : "refused"), expected \(testCase.status)"
    }

    /// Each request case against one server: `nil` when it passed, else what differed.
    static func run(_ cases: [Case], configuration: ServerConfiguration) async throws -> [(Case, String?)] {
        let collected = Collected()
        try await withServer(.live, configure: { $0 = merged(configuration, into: $0) }) { client, _ in
            for testCase in cases {
                let (status, _, body) = try await get(client, testCase.path)
                await collected.append(testCase, check(testCase, status: status.code, body: body))
            }
        }
        return await collected.outcomes
    }

    /// The harness's own settings (port, no disk cache, the loopback origin) kept, imgproxy's applied.
    private static func merged(_ imgproxy: ServerConfiguration, into harness: ServerConfiguration)
        -> ServerConfiguration
    {
        var configuration = imgproxy
        (configuration.listener.port, configuration.caching.directory, configuration.origins.privateNetworkHosts) =
            (harness.listener.port, harness.caching.directory, harness.origins.privateNetworkHosts)
        return configuration
    }

    /// imgproxy answers every option, URL and path error 404 ("Invalid URL"); this server answers a
    /// malformed or unsupported option 400 naming it (the project's rule), a path no syntax reads 404.
    static func check(_ testCase: Case, status: Int, body: Data) -> String? {
        let acceptable: Set<Int> = testCase.status == 404 ? [400, 404] : [testCase.status]
        guard acceptable.contains(status) else {
            return "status \(status), expected \(testCase.status): \(String(decoding: body.prefix(300), as: UTF8.self))"
        }
        guard status == 200 else { return nil }
        if let expected = testCase.interpretation {
            guard let header = try? VipsImageDecoder().inspect(body) else { return "the answer is no image" }
            if header.colorSpace != expected { return "interpretation \(header.colorSpace), expected \(expected)" }
        }
        guard let width = testCase.width, let height = testCase.height else { return nil }
        guard let image = try? VipsImageDecoder().decode(body, recipe: ImageRecipe()) else {
            return "the answer is no image"
        }
        return (image.width, image.height) == (width, height)
            ? nil : "size \(image.width)x\(image.height), expected \(width)x\(height)"
    }

    actor Collected {
        var outcomes: [(Case, String?)] = []
        func append(_ testCase: Case, _ problem: String?) { outcomes.append((testCase, problem)) }
    }

    struct Results {
        var passed = 0
        var failures: [(String, String)] = []
        var omitted: [(String, String)] = []
        var total: Int { passed + failures.count + omitted.count }

        mutating func record(_ testCase: Case, _ problem: String?) {
            if let problem { failures.append((testCase.id, problem)) } else { passed += 1 }
        }

        mutating func leftOut(_ testCase: Case, _ reason: String) { omitted.append((testCase.id, reason)) }

        var summary: String {
            var text =
                "imgproxy conformance: \(passed) passed, \(failures.count) failed, \(omitted.count) left out of \(total)\n"
            for (reason, ids) in Dictionary(grouping: omitted, by: \.1) {
                text += "  left out (\(ids.count)): \(reason)\n"
            }
            return text
        }
    }

    struct ConformanceError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
