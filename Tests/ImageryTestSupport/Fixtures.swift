import Foundation

/// Where test images live: small committed fixtures, and the shared corpus when present.
public enum Fixtures {
    /// The repository root, found from this file's path.
    public static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `Tests/Fixtures`.
    public static let directory = repositoryRoot.appendingPathComponent("Tests/Fixtures")

    /// A committed fixture by file name.
    public static func url(_ name: String) -> URL { directory.appendingPathComponent(name) }

    /// A committed fixture's bytes.
    public static func data(_ name: String) throws -> Data { try Data(contentsOf: url(name)) }

    /// `../shared/corpus` (or `$IMAGERY_CORPUS`), if it exists.
    public static var corpus: URL? {
        existing(ProcessInfo.processInfo.environment["IMAGERY_CORPUS"])
            ?? existing(repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus").path)
    }

    /// `../shared/corpus-bad` (or `$IMAGERY_CORPUS_BAD`), if it exists.
    public static var corpusBad: URL? {
        existing(ProcessInfo.processInfo.environment["IMAGERY_CORPUS_BAD"])
            ?? existing(repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus-bad").path)
    }

    /// The image files directly in a corpus directory (its MANIFEST and subdirectories excluded), sorted by name.
    public static func files(in directory: URL) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { !$0.hasPrefix(".") && !$0.hasSuffix(".tsv") && !$0.hasSuffix(".md") }
            .sorted()
            .map { directory.appendingPathComponent($0) }
            .filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
    }

    /// The corpus manifest's rows: file name to (format, width, height).
    public static func corpusManifest() -> [String: (format: String, width: Int, height: Int)] {
        guard let corpus,
            let text = try? String(contentsOf: corpus.appendingPathComponent("MANIFEST.tsv"), encoding: .utf8)
        else { return [:] }
        var rows: [String: (String, Int, Int)] = [:]
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count > 3, let width = Int(fields[2]), let height = Int(fields[3]) else { continue }
            rows[fields[0]] = (fields[1], width, height)
        }
        return rows
    }

    private static func existing(_ path: String?) -> URL? {
        guard let path, FileManager.default.fileExists(atPath: path) else { return nil }
        return URL(fileURLWithPath: path)
    }
}
