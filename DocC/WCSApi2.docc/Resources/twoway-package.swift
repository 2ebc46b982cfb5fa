// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "TwoWayStreaming",
  platforms: [.macOS(.v13)],
  dependencies: [
    .package(path: "../WCSApi2")
  ],
  targets: [
    .executableTarget(
      name: "TwoWayStreaming",
      dependencies: [.product(name: "WCSApi2", package: "WCSApi2")],
      swiftSettings: [.swiftLanguageMode(.v6)]
    )
  ]
)
