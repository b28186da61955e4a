// swift-tools-version:6.1
import PackageDescription

// A Vapor 4 app that adds Imagery to its Package.swift as any other: one route that answers a thumbnail
// in the format the client's `Accept` header chooses (`ImagePipeline.encodedImage(for:)`), its sources
// loaded with Vapor's own HTTP client. Imagery is named by path here (this repository); an app names it
// by URL and version instead: .package(url: "https://github.com/OWNER/imagery.git", .upToNextMinor(from: "0.1.0")).
let package = Package(
    name: "VaporApp",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Imagery", path: "../.."),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.3"),
    ],
    targets: [
        .target(
            name: "ThumbnailRoutes",
            dependencies: [
                .product(name: "Imagery", package: "Imagery"),
                .product(name: "Vapor", package: "vapor"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "VaporApp",
            dependencies: [
                "ThumbnailRoutes",
                .product(name: "ImageryVips", package: "Imagery"),
                .product(name: "ImageryHTTP", package: "Imagery"),
                .product(name: "ImageryDiskCache", package: "Imagery"),
                .product(name: "Vapor", package: "vapor"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "ThumbnailRoutesTests",
            dependencies: [
                "ThumbnailRoutes",
                .product(name: "ImageryVips", package: "Imagery"),
                .product(name: "ImageryDiskCache", package: "Imagery"),
                .product(name: "VaporTesting", package: "vapor"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
