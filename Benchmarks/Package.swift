// swift-tools-version:6.1
// Benchmarks live in their own package so users of Imagery never resolve them.
import PackageDescription

let package = Package(
    name: "ImageryBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // `Imagery` is a link to the repository root: the identity stays "imagery" whatever the clone is called.
        .package(path: "Imagery"),
    ],
    targets: [
        .executableTarget(
            name: "ImageryBenchmarks",
            dependencies: [
                .product(name: "Imagery", package: "Imagery"),
                .product(name: "ImageryVips", package: "Imagery"),
                .product(name: "ImageryDiskCache", package: "Imagery"),
                .product(name: "ImageryHTTP", package: "Imagery"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
