// swift-tools-version:6.0
// WCSApi2 for Linux: the Flashphoner WCS SDK (FPWCSApi2) API on our own WebRTC stack.
// Layout and layering: see README.md ("Layout") and ../shared/docs/ARCHITECTURE.md.
import PackageDescription

let cLibraries: [LinkerSetting] = [
  .linkedLibrary("websockets"),
  .linkedLibrary("ssl"),
  .linkedLibrary("crypto"),
  .linkedLibrary("srtp2"),
  .linkedLibrary("opus"),
  .linkedLibrary("vpx"),
  .linkedLibrary("usrsctp"),
  .linkedLibrary("m"),
  .linkedLibrary("yuv"),
]

let strict: [SwiftSetting] = [
  .swiftLanguageMode(.v6),
  .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
  name: "WCSApi2",
  platforms: [.macOS(.v13)],
  products: [
    .library(name: "WCSApi2", targets: ["WCSApi2", "FPWCSApi2", "FPWCSApi2Swift"]),
    .library(name: "WCSLocalServer", targets: ["WCSLocalServer"]),
  ],
  targets: [
    // C headers of the six libraries plus the few C functions Swift cannot import.
    .target(
      name: "CWebRTCCore",
      linkerSettings: cLibraries
    ),
    .target(name: "WCSTransport", dependencies: ["CWebRTCCore"], swiftSettings: strict),
    .target(
      name: "WCSMedia", dependencies: ["CWebRTCCore", "CFFmpeg", "CMediaDevices"],
      swiftSettings: strict),
    .target(name: "WCSApi2", dependencies: ["WCSTransport", "WCSMedia"], swiftSettings: strict),
    // Module names the iOS SDK uses, so `import FPWCSApi2Swift` compiles unchanged.
    .target(name: "FPWCSApi2", dependencies: ["WCSApi2"], swiftSettings: strict),
    .target(name: "FPWCSApi2Swift", dependencies: ["WCSApi2"], swiftSettings: strict),
    .target(
      name: "WCSLocalServer", dependencies: ["WCSTransport", "WCSMedia"], swiftSettings: strict),

    .testTarget(name: "CWebRTCCoreTests", dependencies: ["CWebRTCCore"], swiftSettings: strict),
    .testTarget(
      name: "WCSTransportTests", dependencies: ["WCSTransport", "CWebRTCCore"],
      swiftSettings: strict),
    .testTarget(
      name: "WCSMediaTests", dependencies: ["WCSMedia", "CWebRTCCore", "CMediaDevices"],
      swiftSettings: strict),
    .testTarget(
      name: "WCSApi2Tests",
      dependencies: [
        "WCSApi2", "WCSTransport", "WCSMedia", "FPWCSApi2Swift", "WCSLocalServer",
      ],
      swiftSettings: strict),
    .testTarget(
      name: "WCSLocalServerTests", dependencies: ["WCSLocalServer", "WCSTransport", "WCSMedia"],
      swiftSettings: strict),

    // Real devices: V4L2 cameras, PulseAudio/ALSA audio, X11 screen capture (xcb + MIT-SHM), MJPEG
    // decoding (libturbojpeg). Headers plus tiny shims only.
    .target(
      name: "CMediaDevices",
      linkerSettings: [
        .linkedLibrary("pulse-simple"), .linkedLibrary("pulse"), .linkedLibrary("asound"),
        .linkedLibrary("xcb"), .linkedLibrary("xcb-shm"), .linkedLibrary("turbojpeg"),
      ]),
    // C headers of FFmpeg (recording to WebM, reading media files) plus macro shims.
    .target(
      name: "CFFmpeg",
      linkerSettings: [
        .linkedLibrary("avformat"),
        .linkedLibrary("avcodec"),
        .linkedLibrary("swscale"),
        .linkedLibrary("swresample"),
        .linkedLibrary("avutil"),
      ]
    ),
  ]
)

// Release-mode benchmarks that print figures: `swift run -c release <Name>`.
// CodecBench: codecs and payload formats; RTPBench: the RTP/SRTP hot path; SDPBench: SDP parse
// and write; STUNBench: the STUN codec; DevicesBench: webcam/screen frame conversion;
// PeerConnectionBench: loopback connect time (ICE + DTLS); NativeBackendBench: loopback
// publish → play through NativeMediaBackend; PipelineBench: the media pipeline's CPU beyond the
// codecs and memory per played stream.
for name in [
  "CodecBench", "DevicesBench", "NativeBackendBench", "PeerConnectionBench", "PipelineBench",
  "RTPBench", "SDPBench", "STUNBench",
] {
  package.targets.append(
    .executableTarget(
      name: name, dependencies: ["WCSMedia", "CWebRTCCore", "CMediaDevices"],
      path: "Benchmarks/\(name)", swiftSettings: strict))
}
// SignalingBench: time from WebSocketTransport.connect to opened, ws:// and wss://.
package.targets.append(
  .executableTarget(
    name: "SignalingBench", dependencies: ["WCSTransport"], path: "Benchmarks/SignalingBench",
    swiftSettings: strict))
// RelayBench: the local server's SFU relay, one 1.5 Mbit/s publisher → N players on loopback.
package.targets.append(
  .executableTarget(
    name: "RelayBench", dependencies: ["WCSLocalServer", "WCSMedia"],
    path: "Benchmarks/RelayBench", swiftSettings: strict))
// `swift run wcs-local-server --help`: the local WCS-compatible server as a program.
package.targets.append(
  .executableTarget(
    name: "wcs-local-server", dependencies: ["WCSLocalServer"], swiftSettings: strict))
package.products.append(.executable(name: "wcs-local-server", targets: ["wcs-local-server"]))

// The iOS SDK's examples on Linux (`swift run TwoWayStreaming --help`), their shared code, and
// the demo (`make demo`: publish real media through the local server, play it back, record it).
package.targets.append(
  .target(
    name: "ExampleSupport", dependencies: ["FPWCSApi2Swift", "WCSLocalServer", "WCSMedia"],
    path: "Examples/ExampleSupport", swiftSettings: strict))
for name in [
  "MediaDevices", "Player", "ScreenCapturer", "StreamRecording", "Streamer", "TwoWayStreaming",
] {
  package.targets.append(
    .executableTarget(
      name: name, dependencies: ["FPWCSApi2Swift", "WCSLocalServer", "ExampleSupport"],
      path: "Examples/\(name)", swiftSettings: strict))
}
package.targets.append(
  .executableTarget(
    name: "wcs-demo", dependencies: ["FPWCSApi2Swift", "WCSLocalServer", "ExampleSupport"],
    path: "Examples/Demo", swiftSettings: strict))
package.products.append(.executable(name: "wcs-demo", targets: ["wcs-demo"]))
package.targets.append(
  .testTarget(
    name: "ExamplesTests",
    dependencies: ["ExampleSupport", "WCSLocalServer", "FPWCSApi2Swift", "WCSMedia"],
    swiftSettings: strict))
// Interop peer for the Chromium tests: run inside a network namespace, it serves
// Tests/Interop/chromium, drives headless Chromium and plays the Swift side. The WCSMedia tests
// depend on it so that building the tests builds it; they run it as a separate process.
package.targets.append(
  .executableTarget(
    name: "InteropPeer", dependencies: ["WCSMedia", "WCSTransport"],
    path: "Sources/InteropPeer", swiftSettings: strict))
// The `wcs` scenario runs wcs-local-server next to it, so building the tests builds both.
for index in package.targets.indices where package.targets[index].name == "WCSMediaTests" {
  package.targets[index].dependencies += ["InteropPeer", "wcs-local-server"]
}
