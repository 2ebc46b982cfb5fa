// swift-tools-version:6.0
// WCSApi2 for Linux: the Flashphoner WCS SDK (FPWCSApi2) API on our own WebRTC stack.
// Layout and layering: see README.md ("Layout") and ../shared/docs/ARCHITECTURE.md.
import PackageDescription

let strict: [SwiftSetting] = [
  .swiftLanguageMode(.v6),
  .enableUpcomingFeature("ExistentialAny"),
]

// MARK: - Libraries

let cTargets: [Target] = [
  // C headers of libwebsockets, OpenSSL, libsrtp2, libopus, libvpx, usrsctp and libyuv, plus
  // the few C functions Swift cannot import (macros, variadic ctl calls, LWS_PRE).
  .target(
    name: "CWebRTCCore",
    linkerSettings: [
      .linkedLibrary("websockets"), .linkedLibrary("ssl"), .linkedLibrary("crypto"),
      .linkedLibrary("srtp2"), .linkedLibrary("opus"), .linkedLibrary("vpx"),
      .linkedLibrary("usrsctp"), .linkedLibrary("m"), .linkedLibrary("yuv"),
    ]),
  // Real devices: V4L2 cameras, PulseAudio/ALSA audio, X11 screen capture (xcb + MIT-SHM), MJPEG
  // decoding (libturbojpeg). Headers plus tiny shims only.
  .target(
    name: "CMediaDevices",
    linkerSettings: [
      .linkedLibrary("pulse-simple"), .linkedLibrary("pulse"), .linkedLibrary("asound"),
      .linkedLibrary("xcb"), .linkedLibrary("xcb-shm"), .linkedLibrary("turbojpeg"),
    ]),
  // libre (Debian libre-dev, the SIP stack baresip is built on) behind a small C API for the
  // local server's WebRTC–SIP gateway: libre's loop runs on a thread of its own.
  .target(name: "CSIPGateway", linkerSettings: [.linkedLibrary("re"), .linkedLibrary("pthread")]),
  // FFmpeg (recording to WebM, reading media files) plus macro shims.
  .target(
    name: "CFFmpeg",
    linkerSettings: [
      .linkedLibrary("avformat"), .linkedLibrary("avcodec"), .linkedLibrary("swscale"),
      .linkedLibrary("swresample"), .linkedLibrary("avutil"),
    ]),
]

let swiftTargets: [Target] = [
  .target(name: "WCSTransport", dependencies: ["CWebRTCCore"], swiftSettings: strict),
  .target(
    name: "WCSMedia", dependencies: ["CWebRTCCore", "CFFmpeg", "CMediaDevices"],
    swiftSettings: strict),
  .target(name: "WCSApi2", dependencies: ["WCSTransport", "WCSMedia"], swiftSettings: strict),
  // Module names the iOS SDK uses, so `import FPWCSApi2Swift` compiles unchanged.
  .target(name: "FPWCSApi2", dependencies: ["WCSApi2"], swiftSettings: strict),
  .target(name: "FPWCSApi2Swift", dependencies: ["WCSApi2"], swiftSettings: strict),
  .target(
    name: "WCSLocalServer", dependencies: ["WCSTransport", "WCSMedia", "CSIPGateway"],
    swiftSettings: strict),
]

// MARK: - Programs

let programs: [Target] = [
  // `swift run wcs-local-server --help`: the local WCS-compatible server as a program.
  .executableTarget(
    name: "wcs-local-server", dependencies: ["WCSLocalServer"], swiftSettings: strict),
  // Interop peer for the Chromium tests: run inside a network namespace, it serves
  // Tests/Interop/chromium, drives headless Chromium and plays the Swift side.
  .executableTarget(
    name: "InteropPeer", dependencies: ["WCSMedia", "WCSTransport"],
    path: "Sources/InteropPeer", swiftSettings: strict),
]

// The iOS SDK's examples on Linux (`swift run TwoWayStreaming --help`), their shared code, and
// the demo (`make demo`: publish real media through the local server, play it back, record it).
let exampleNames = [
  "ClickToCall", "Conference", "MediaDevices", "Phone", "Player", "ScreenCapturer",
  "StreamRecording",
  "Streamer",
  "TwoWayStreaming", "VideoChat",
]
let examples: [Target] =
  [
    .target(
      name: "ExampleSupport", dependencies: ["FPWCSApi2Swift", "WCSLocalServer", "WCSMedia"],
      path: "Examples/ExampleSupport", swiftSettings: strict),
    .executableTarget(
      name: "wcs-demo", dependencies: ["FPWCSApi2Swift", "WCSLocalServer", "ExampleSupport"],
      path: "Examples/Demo", swiftSettings: strict),
  ]
  + exampleNames.map { name in
    .executableTarget(
      name: name, dependencies: ["FPWCSApi2Swift", "WCSLocalServer", "ExampleSupport"],
      path: "Examples/\(name)", swiftSettings: strict)
  }

// Release-mode benchmarks that print figures: `swift run -c release <Name>`.
// CodecBench: codecs and payload formats; RTPBench: the RTP/SRTP hot path; SDPBench: SDP parse
// and write; STUNBench: the STUN codec; DevicesBench: webcam/screen frame conversion;
// PeerConnectionBench: loopback connect time (ICE + DTLS); NativeBackendBench: loopback
// publish → play through NativeMediaBackend; PipelineBench: the media pipeline's CPU beyond the
// codecs and memory per played stream; SignalingBench: WebSocketTransport connect → opened, ws://
// and wss://; RelayBench: the local server's SFU relay, one 1.5 Mbit/s publisher → N players;
// SetupBench: publish → PUBLISHING and N players' play → PLAYING → first frame, through the
// local server, as an app sees them.
// HardeningBench: what the inputs of issue 29 cost now (time, peak memory) against no limit.
// RoomBench: join → first frame in a room, and the server's CPU for rooms of 2/4/8.
let mediaBenchmarks = [
  "CodecBench", "DevicesBench", "NativeBackendBench", "PeerConnectionBench", "PipelineBench",
  "RTPBench", "SDPBench", "STUNBench",
]
let benchmarks: [Target] =
  mediaBenchmarks.map { name in
    .executableTarget(
      name: name,
      dependencies: ["WCSMedia", "CWebRTCCore", "CMediaDevices"]
        + (name == "PipelineBench" ? ["CColdCode"] : []),
      path: "Benchmarks/\(name)", swiftSettings: strict)
  } + [
    // Process CPU time for the benchmarks that measure a child process (RelayBench, RoomBench).
    .target(name: "BenchSupport", path: "Benchmarks/BenchSupport", swiftSettings: strict),
    // PipelineBench's cold-code calibration (`raw-receive [seconds] [code lines]`).
    .target(name: "CColdCode", path: "Benchmarks/CColdCode"),
    .executableTarget(
      name: "SignalingBench", dependencies: ["WCSTransport"], path: "Benchmarks/SignalingBench",
      swiftSettings: strict),
    .executableTarget(
      name: "RelayBench", dependencies: ["BenchSupport", "WCSLocalServer", "WCSMedia"],
      path: "Benchmarks/RelayBench", swiftSettings: strict),
    // LossBench: issue 23's loss figures (frames decoded, freezes, setup times) under real
    // kernel drops in a network namespace, through the local server and to aiortc.
    .executableTarget(
      name: "LossBench", dependencies: ["FPWCSApi2Swift", "WCSLocalServer", "WCSMedia"],
      path: "Benchmarks/LossBench", swiftSettings: strict),
    .executableTarget(
      name: "SetupBench", dependencies: ["FPWCSApi2Swift", "WCSLocalServer"],
      path: "Benchmarks/SetupBench", swiftSettings: strict),
    .executableTarget(
      name: "HardeningBench", dependencies: ["WCSMedia", "WCSTransport"],
      path: "Benchmarks/HardeningBench", swiftSettings: strict),
    .executableTarget(
      name: "RoomBench",
      dependencies: ["BenchSupport", "FPWCSApi2Swift", "WCSLocalServer", "WCSMedia"],
      path: "Benchmarks/RoomBench", swiftSettings: strict),
  ]

// MARK: - Tests

let tests: [Target] = [
  .testTarget(name: "CWebRTCCoreTests", dependencies: ["CWebRTCCore"], swiftSettings: strict),
  .testTarget(
    name: "WCSTransportTests", dependencies: ["WCSTransport", "CWebRTCCore"],
    swiftSettings: strict),
  // InteropPeer and wcs-local-server are run as separate processes by the interop tests
  // (Chromium, the `wcs` scenario): depending on them makes building the tests build them.
  .testTarget(
    name: "WCSMediaTests",
    dependencies: ["WCSMedia", "CWebRTCCore", "CMediaDevices", "InteropPeer", "wcs-local-server"],
    swiftSettings: strict),
  .testTarget(
    name: "WCSApi2Tests",
    dependencies: ["WCSApi2", "WCSTransport", "WCSMedia", "FPWCSApi2Swift", "WCSLocalServer"],
    swiftSettings: strict),
  .testTarget(
    name: "WCSLocalServerTests", dependencies: ["WCSLocalServer", "WCSTransport", "WCSMedia"],
    swiftSettings: strict),
  // LossBench: KernelLossRecoveryTests run its `--child` mode under real kernel drops.
  .testTarget(
    name: "ExamplesTests",
    dependencies: ["ExampleSupport", "WCSLocalServer", "FPWCSApi2Swift", "WCSMedia", "LossBench"],
    swiftSettings: strict),
]

let package = Package(
  name: "WCSApi2",
  platforms: [.macOS(.v13)],
  products: [
    .library(name: "WCSApi2", targets: ["WCSApi2", "FPWCSApi2", "FPWCSApi2Swift"]),
    .library(name: "WCSLocalServer", targets: ["WCSLocalServer"]),
    .executable(name: "wcs-local-server", targets: ["wcs-local-server"]),
    .executable(name: "wcs-demo", targets: ["wcs-demo"]),
  ],
  targets: cTargets + swiftTargets + programs + examples + benchmarks + tests
)
