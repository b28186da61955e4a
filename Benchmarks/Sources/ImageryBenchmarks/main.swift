import Foundation

// Side-by-side benchmarks: each comparison runs Imagery and its peer in one run.
// Usage: swift run -c release --package-path Benchmarks ImageryBenchmarks [cache|disk|thumbnail|smartcrop|placeholder|all] [--corpus DIR]
//        ImageryBenchmarks scroll --origin URL --names FILE   (scripts/scroll-benchmark starts the origin)
//        ImageryBenchmarks previews [--corpus DIR] [--origin URL]   (scripts/preview-benchmark starts a 1 MB/s origin)
let arguments = CommandLine.arguments.dropFirst()
let which = arguments.first { !$0.hasPrefix("--") } ?? "all"
let corpusPath = arguments.firstIndex(of: "--corpus").map { arguments[arguments.index(after: $0)] }
    ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../../shared/corpus").standardized.path

print("Imagery benchmarks, \(ProcessInfo.processInfo.activeProcessorCount) cores, \(Date())")
if which == "scroll" {
    guard let origin = arguments.firstIndex(of: "--origin").map({ arguments[arguments.index(after: $0)] }).flatMap(URL.init(string:)),
          let namesFile = arguments.firstIndex(of: "--names").map({ arguments[arguments.index(after: $0)] }),
          let names = try? String(contentsOfFile: namesFile, encoding: .utf8).split(separator: "\n").map(String.init), !names.isEmpty
    else {
        print("scroll needs --origin URL and --names FILE (use scripts/scroll-benchmark)")
        exit(2)
    }
    try await ScrollBenchmark.run(origin: origin, names: names)
    try await PrefetchQueueBenchmark.run(origin: origin)
    exit(0)
}
if which == "previews" {
    guard FileManager.default.fileExists(atPath: corpusPath) else {
        print("no corpus at \(corpusPath): skipping the preview benchmark")
        exit(0)
    }
    let corpus = URL(fileURLWithPath: corpusPath)
    try PreviewBenchmark.decodeCosts(corpus: corpus)
    if let origin = arguments.firstIndex(of: "--origin").map({ arguments[arguments.index(after: $0)] }).flatMap(URL.init(string:)) {
        try await PreviewBenchmark.throttled(corpus: corpus, origin: origin)
    }
    exit(0)
}
if which == "cache" || which == "all" {
    printTable("MemoryCache vs NSCache (100k entries of varied cost, cost limit holds ~80%)", CacheBenchmark.run())
}
if which == "disk" || which == "all" {
    printTable("DiskCache", try await DiskCacheBenchmark.run())
}
if ["thumbnail", "smartcrop", "placeholder", "all"].contains(which) {
    guard FileManager.default.fileExists(atPath: corpusPath) else {
        print("no corpus at \(corpusPath): skipping the thumbnail benchmarks")
        exit(0)
    }
    if which == "placeholder" || which == "all" {
        printTable(
            "Placeholders of every corpus image vs a 256-px thumbnail (1 thread; the ratio is the hash's share of the thumbnail's time)",
            try PlaceholderBenchmark.run(corpus: URL(fileURLWithPath: corpusPath))
        )
    }
    if which == "thumbnail" || which == "all" {
        printTable("Thumbnails of the corpus JPEGs to fit 256x256", try ThumbnailBenchmark.run(corpus: URL(fileURLWithPath: corpusPath)))
    }
    if which == "smartcrop" || which == "all" {
        printTable(
            "Smart crops of the corpus JPEGs, 256x256 (libvips attention)",
            try ThumbnailBenchmark.run(corpus: URL(fileURLWithPath: corpusPath), smart: true)
        )
    }
}
