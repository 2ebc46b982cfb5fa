// Code of the "Getting Started" article (DocC/WCSApi2.docc/Articles/GettingStarted.md), verbatim;
// scripts/check-doc-snippets.sh fails when an article's code is no longer found here.

import FPWCSApi2Swift

/// Connects, publishes the default camera and microphone as `name` and plays it back.
func publishAndPlay(serverURL: String, name: String) async throws -> (WCSStream, WCSStream) {
  let options = FPWCSApi2SessionOptions()
  options.urlServer = serverURL
  let session = try WCSSession(options)
  try await session.connect()

  let publishOptions = FPWCSApi2StreamOptions()
  publishOptions.name = name
  let publisher = try session.createStream(publishOptions)
  try await publisher.publish()

  let playOptions = FPWCSApi2StreamOptions()
  playOptions.name = name
  playOptions.display = VideoFrameCallbackRenderer { frame in
    print("frame \(frame.width)x\(frame.height)")
  }
  let player = try session.createStream(playOptions)
  try await player.play()
  return (publisher, player)
}

/// The app's `main.swift` (top-level code there, after `import FPWCSApi2Swift`).
func runMyStreamer() async throws -> (WCSStream, WCSStream) {
  let arguments = CommandLine.arguments.filter { $0.hasPrefix("ws") }
  let serverURL = arguments.first ?? "ws://127.0.0.1:8080"
  let (publisher, player) = try await publishAndPlay(serverURL: serverURL, name: "camera")
  print("publishing \(publisher.getName()), playing \(player.getName())")
  return (publisher, player)
}

/// Stops both streams and closes the session.
func stopAndDisconnect(publisher: WCSStream, player: WCSStream, session: FPWCSApi2Session) throws {
  try player.stop()
  try publisher.stop()
  session.disconnect()
}

/// The manifest of an app that uses the SDK (the article shows it as `Package.swift`).
let gettingStartedManifest = """
  // swift-tools-version:6.0
  import PackageDescription

  let package = Package(
    name: "MyStreamer",
    dependencies: [
      .package(path: "../WCSApi2")
    ],
    targets: [
      .executableTarget(
        name: "MyStreamer",
        dependencies: [.product(name: "WCSApi2", package: "WCSApi2")]
      )
    ]
  )
  """
