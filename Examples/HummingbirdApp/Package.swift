// swift-tools-version:6.1
import PackageDescription

// An app that adds Imagery to its Package.swift as any other: one route that answers a thumbnail in the
// format the client's `Accept` header chooses (`ImagePipeline.encodedImage(for:)`). Imagery is named by
// path here (this repository); an app names it by URL and version instead:
// .package(url: "https://github.com/OWNER/imagery.git", .upToNextMinor(from: "0.1.0")).
let package = Package(
    name: "HummingbirdApp",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Imagery", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
    ],
    targets: [
        .target(
            name: "ThumbnailService",
            dependencies: [
                .product(name: "Imagery", package: "Imagery"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "HummingbirdApp",
            dependencies: [
                "ThumbnailService",
                .product(name: "ImageryVips", package: "Imagery"),
                .product(name: "ImageryHTTP", package: "Imagery"),
                .product(name: "ImageryDiskCache", package: "Imagery"),
                .product(name: "ImageryLifecycle", package: "Imagery"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "ThumbnailServiceTests",
            dependencies: [
                "ThumbnailService",
                .product(name: "ImageryVips", package: "Imagery"),
                .product(name: "ImageryDiskCache", package: "Imagery"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
