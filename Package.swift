// swift-tools-version:6.1
import PackageDescription

// scripts/fuzz sets IMAGERY_FUZZ_RUNTIME to libFuzzer's archive (libclang_rt.fuzzer_no_main): Imagery's own
// modules, Swift and C, are then built with libFuzzer's coverage and AddressSanitizer, and the dependencies as
// they are (ASan's runtime still watches every allocation), so a fuzz build in a build folder that holds the
// ordinary build recompiles only Imagery's own code.
let fuzzRuntime = Context.environment["IMAGERY_FUZZ_RUNTIME"]
let coverage = "edge,trace-cmp,inline-8bit-counters,pc-table"
let fuzzSwift: [SwiftSetting] =
    fuzzRuntime == nil
    ? []
    : [
        .unsafeFlags(["-sanitize=address", "-sanitize-coverage=\(coverage)"]), .define("IMAGERY_FUZZING"),
    ]
let fuzzC: [CSetting] =
    fuzzRuntime == nil ? [] : [.unsafeFlags(["-fsanitize=address", "-fsanitize-coverage=\(coverage)"])]
let fuzzLinker: [LinkerSetting] =
    fuzzRuntime.map { [.unsafeFlags(["-sanitize=address", "-Xlinker", $0, "-Xlinker", "-lstdc++"])] } ?? []

let strictSwift: [SwiftSetting] =
    [
        .swiftLanguageMode(.v6),
        .enableUpcomingFeature("ExistentialAny"),
    ] + fuzzSwift

let package = Package(
    name: "Imagery",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "Imagery", targets: ["Imagery"]),
        .library(name: "ImageryVips", targets: ["ImageryVips"]),
        .library(name: "ImageryHTTP", targets: ["ImageryHTTP"]),
        .library(name: "ImageryDiskCache", targets: ["ImageryDiskCache"]),
        .library(name: "ImageryS3", targets: ["ImageryS3"]),
        .library(name: "ImageryLifecycle", targets: ["ImageryLifecycle"]),
        .library(name: "ImageryServer", targets: ["ImageryServer"]),
        .executable(name: "imagery", targets: ["ImageryCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // The server's configuration: one key namespace, many providers (ImageryServer/Configuration).
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: []),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        // `swift package generate-documentation --target Imagery` (Sources/Imagery/Imagery.docc).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // Core: Foundation and Synchronization only. No NIO, no C.
        .target(name: "Imagery", swiftSettings: strictSwift),

        // libvips through a shim header of non-variadic inline wrappers.
        .systemLibrary(
            name: "CVips",
            pkgConfig: "vips",
            providers: [.apt(["libvips-dev"])]
        ),
        // JPEG on libjpeg(-turbo): decoding at a DCT scale, skipping the progressive scans the scale never
        // reads; encoding with optimised Huffman and tuned tables and trellis quantisation.
        .target(name: "CJPEG", cSettings: fuzzC, linkerSettings: [.linkedLibrary("jpeg"), .linkedLibrary("m")]),
        // Perceived difference between two images: SSIMULACRA2.
        .target(name: "CQuality", cSettings: fuzzC, linkerSettings: [.linkedLibrary("m")]),
        // Animated GIFs: frames shrunk by area averaging; output with one palette for every frame (libimagequant), written by cgif.
        .target(
            name: "CGIFFrames", cSettings: fuzzC,
            linkerSettings: [.linkedLibrary("cgif"), .linkedLibrary("imagequant")]),
        // ICC profiles to sRGB on 8-bit RGB pixels with little cms, its transforms cached by profile.
        .target(name: "CColorTransform", cSettings: fuzzC, linkerSettings: [.linkedLibrary("lcms2")]),
        .target(name: "CMallocInfo", cSettings: fuzzC),
        .target(
            name: "ImageryVips",
            dependencies: ["Imagery", "CVips", "CJPEG", "CGIFFrames", "CColorTransform", "CQuality"],
            swiftSettings: strictSwift),

        // The persistent disk cache: blobs in files, its index in SQLite (the system libsqlite3).
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "ImageryDiskCache", dependencies: ["Imagery", "CSQLite"], swiftSettings: strictSwift),

        .target(
            name: "ImageryHTTP",
            dependencies: [
                "Imagery",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),

        // swift-service-lifecycle Services: the HTTP loader, the disk cache, a pipeline's stores.
        .target(
            name: "ImageryLifecycle",
            dependencies: [
                "Imagery", "ImageryHTTP", "ImageryDiskCache",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSwift
        ),

        // S3-compatible object storage on AsyncHTTPClient: SigV4 (swift-crypto), a client, s3:// sources.
        .target(
            name: "ImageryS3",
            dependencies: [
                "Imagery",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSwift
        ),

        // The image proxy: one buildApplication(configuration:) for the CLI and the tests.
        .target(
            name: "ImageryServer",
            dependencies: [
                "Imagery", "ImageryVips", "ImageryHTTP", "ImageryDiskCache", "ImageryS3", "CMallocInfo",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: strictSwift
        ),

        .executableTarget(
            name: "ImageryCLI",
            dependencies: [
                "Imagery", "ImageryVips", "ImageryHTTP", "ImageryDiskCache", "ImageryServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),

        // Test support: a real HTTP origin on 127.0.0.1 (SwiftNIO) and fixture lookup.
        .target(
            name: "ImageryTestSupport",
            dependencies: [
                "Imagery",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Tests/ImageryTestSupport",
            swiftSettings: strictSwift
        ),
        // A child process for the crash-recovery tests: writes entries until it is killed.
        .executableTarget(
            name: "ImageryCrashWriter",
            dependencies: ["Imagery", "ImageryDiskCache", "ImageryTestSupport"],
            path: "Tests/CrashWriter",
            swiftSettings: strictSwift
        ),
        // Fuzz targets (Fuzz/README.md): every parser of untrusted input that runs without libvips, and
        // `imagery-fuzz`, libFuzzer under scripts/fuzz and a replayer of inputs otherwise.
        .target(
            name: "ImageryFuzzTargets",
            dependencies: [
                "Imagery", "ImageryDiskCache", "ImageryServer", "ImageryVips", "CJPEG", "CGIFFrames", "CColorTransform",
                "CVips",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Fuzz/Targets",
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "imagery-fuzz", dependencies: ["ImageryFuzzTargets"], path: "Fuzz/Runner", swiftSettings: strictSwift,
            linkerSettings: fuzzLinker
        ),
        .testTarget(name: "ImageryFuzzTests", dependencies: ["ImageryFuzzTargets"], swiftSettings: strictSwift),
        .testTarget(name: "ImageryTests", dependencies: ["Imagery"], swiftSettings: strictSwift),
        .testTarget(
            name: "ImageryDiskCacheTests",
            dependencies: ["Imagery", "ImageryDiskCache", "ImageryTestSupport", "ImageryCrashWriter"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "ImageryVipsTests",
            dependencies: ["Imagery", "ImageryVips", "ImageryTestSupport", "CJPEG", "CColorTransform", "CGIFFrames"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "ImageryHTTPTests",
            dependencies: ["Imagery", "ImageryVips", "ImageryHTTP", "ImageryDiskCache", "ImageryTestSupport"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "ImageryLifecycleTests",
            dependencies: [
                "Imagery", "ImageryHTTP", "ImageryDiskCache", "ImageryLifecycle", "ImageryVips", "ImageryTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "ImageryS3Tests", dependencies: ["ImageryS3", "ImageryTestSupport"], swiftSettings: strictSwift),
        .testTarget(
            name: "ImageryServerTests",
            dependencies: [
                "ImageryServer", "ImageryDiskCache", "ImageryHTTP", "ImageryS3", "ImageryTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictSwift
        ),
        // `imagery`'s argument parsing and the configuration its commands build (`@testable import ImageryCLI`).
        .testTarget(
            name: "ImageryCLITests",
            dependencies: [
                "ImageryCLI", "ImageryServer", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSwift
        ),
    ]
)
