// The tutorial's `Package.swift` (Resources/twoway-package.swift), kept here so that the
// snippet check covers it; DocSnippetTutorialTests compares its product with this package's.

/// The example program's manifest.
let twoWayStreamingManifest = """
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
  """
