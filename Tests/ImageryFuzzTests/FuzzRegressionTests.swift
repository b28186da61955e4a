import Foundation
import ImageryFuzzTargets
import Testing

/// Every committed seed and every input a fuzzer once failed on (Fuzz/Corpus, Fuzz/Regressions)
/// runs through its target: none may crash or break a property again.
@Suite struct FuzzRegressionTests {
    static let fuzz = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Fuzz")
        .standardized

    static func inputs(_ target: FuzzTarget, in folder: String) -> [URL] {
        let directory = fuzz.appendingPathComponent(folder).appendingPathComponent(target.rawValue)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { directory.appendingPathComponent($0) }
    }

    @Test(arguments: FuzzTarget.allCases)
    func seedsAndRegressions(_ target: FuzzTarget) throws {
        let seeds = Self.inputs(target, in: "Corpus")
        #expect(!seeds.isEmpty, "no seeds for \(target.rawValue) in Fuzz/Corpus")
        for file in seeds + Self.inputs(target, in: "Regressions") {
            let bytes = Array(try Data(contentsOf: file))
            #expect(throws: Never.self, "\(file.lastPathComponent)") { try target.run(bytes) }
        }
    }
}
