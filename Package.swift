// swift-tools-version:6.0
// WCSApi2 for Linux: the Flashphoner WCS SDK (FPWCSApi2) API on our own WebRTC stack.
// Layout and layering: see docs/ARCHITECTURE.md and README.md ("Layout").
import PackageDescription

let strict: [SwiftSetting] = [
  .swiftLanguageMode(.v6),
  .enableUpcomingFeature("ExistentialAny"),
]

// MARK: - Libraries

// C shims, one per library or small family: headers plus the few C functions Swift cannot
// import (function-like macros, variadic ctl calls, LWS_PRE, CMSG_*). No logic. Each links
// only its own libraries.
let cTargets: [Target] = [
  // OpenSSL (DTLS, certificates, HMAC) and libsrtp2, which uses OpenSSL's crypto.
  .target(
    name: "COpenSSL",
    linkerSettings: [.linkedLibrary("ssl"), .linkedLibrary("crypto"), .linkedLibrary("srtp2")]),
  // libwebsockets (signalling); its TLS is OpenSSL's, so it comes after COpenSSL.
  .target(
    name: "CWebSockets", dependencies: ["COpenSSL"], linkerSettings: [.linkedLibrary("websockets")]),
  // libopus.
  .target(name: "COpus", linkerSettings: [.linkedLibrary("opus"), .linkedLibrary("m")]),
  // libvpx (VP8).
  .target(name: "CVPX", linkerSettings: [.linkedLibrary("vpx")]),
  // OpenH264 (H.264 encoding; decoding is libavcodec's, through CFFmpeg).
  .target(name: "COpenH264", linkerSettings: [.linkedLibrary("openh264")]),
  // libyuv: pixel format conversion and scaling.
  .target(name: "CYUV", linkerSettings: [.linkedLibrary("yuv")]),
  // usrsctp: only its binding test (CWebRTCCoreTests) uses it.
  .target(name: "CUsrsctp", linkerSettings: [.linkedLibrary("usrsctp")]),
  // recvmsg with the kernel's receive time (SO_TIMESTAMPNS): the event loop's sockets.
  .target(name: "CSockets"),
  // The umbrella over the shims above, for the binding tests and the benchmarks.
  .target(
    name: "CWebRTCCore",
    dependencies: ["COpenSSL", "CWebSockets", "COpus", "CVPX", "CYUV", "CUsrsctp", "CSockets"]),
  // Real devices: V4L2 cameras, PulseAudio/ALSA audio, X11 screen capture (xcb + MIT-SHM), MJPEG
  // decoding (libturbojpeg). Headers plus tiny shims only.
  .target(
    name: "CMediaDevices",
    linkerSettings: [
      .linkedLibrary("pulse-simple"), .linkedLibrary("pulse"), .linkedLibrary("asound"),
      .linkedLibrary("xcb"), .linkedLibrary("xcb-shm"), .linkedLibrary("turbojpeg"),
    ]),
  // SDL2: the window renderer (X11 or Wayland), plus macro shims. Video starts only when a
  // window opens, so linking it is harmless on a headless machine.
  .target(name: "CSDL2", linkerSettings: [.linkedLibrary("SDL2")]),
  // libpng (simplified API): PNG snapshots and report thumbnails.
  .target(name: "CPNG", linkerSettings: [.linkedLibrary("png")]),
  // libturbojpeg: JPEG snapshots (the picture codecs; the devices shim has its own for MJPEG).
  .target(name: "CTurboJPEG", linkerSettings: [.linkedLibrary("turbojpeg")]),
  // libre (Debian libre-dev, the SIP stack baresip is built on) behind a small C API for the
  // local server's WebRTC–SIP gateway: libre's loop runs on a thread of its own.
  .target(name: "CSIPGateway", linkerSettings: [.linkedLibrary("re"), .linkedLibrary("pthread")]),
  // FFmpeg containers and codecs (recording to WebM, reading media files) plus macro shims.
  .target(
    name: "CFFmpeg",
    linkerSettings: [
      .linkedLibrary("avformat"), .linkedLibrary("avcodec"), .linkedLibrary("avutil"),
    ]),
  // FFmpeg scaling and resampling, for reading media files and a pulled source's audio.
  .target(
    name: "CFFmpegConvert", dependencies: ["CFFmpeg"],
    linkerSettings: [.linkedLibrary("swscale"), .linkedLibrary("swresample")]),
]

// The media layers, bottom up; each imports only the ones listed before it (see README,
// "Layout"). `WCSMedia` re-exports them all for examples, benchmarks and tests.
let mediaTargets: [Target] = [
  // The seam WCSApi2 sees: MediaBackend, connection requests and states, frames, renderer and
  // capturer protocols, statistics values.
  .target(name: "WCSMediaSeam", swiftSettings: strict),
  // Opus, VP8, H.264 (OpenH264 encoding, libavcodec decoding), G.711, pixel conversion (libyuv)
  // and PNG/JPEG pictures (libpng, libturbojpeg).
  .target(
    name: "WCSCodecs",
    dependencies: [
      "WCSMediaSeam", "COpus", "CVPX", "COpenH264", "CFFmpeg", "CYUV", "CPNG", "CTurboJPEG",
    ],
    swiftSettings: strict),
  // Sans-I/O protocol cores: SDP, ICE/STUN/TURN, DTLS, SRTP, RTP/RTCP, payload formats, jitter
  // buffer and streams, congestion control. No sockets, threads or Dispatch.
  .target(
    name: "WCSProtocols", dependencies: ["WCSMediaSeam", "WCSCodecs", "COpenSSL", "COpus"],
    swiftSettings: strict),
  // The poll(2) loop, UDP sockets, timers and the network emulator; moves the cores' datagrams.
  .target(
    name: "WCSEventLoop", dependencies: ["WCSProtocols", "CSockets"], swiftSettings: strict),
  // WebM recording (FFmpeg muxing): what the local server links of FFmpeg.
  .target(name: "WCSRecording", dependencies: ["CFFmpeg", "COpus"], swiftSettings: strict),
  // Devices and files: V4L2, PulseAudio/ALSA, X11 screen, media files read with FFmpeg,
  // virtual sources, speakers, Y4M/IVF/WAV writers.
  .target(
    name: "WCSDevices",
    dependencies: [
      "WCSMediaSeam", "WCSCodecs", "WCSRecording", "CMediaDevices", "CFFmpeg", "CFFmpegConvert",
      "CYUV", "CSDL2",
    ],
    swiftSettings: strict),
  // One WebRTC peer connection (ICE + DTLS-SRTP) driven on an event loop: what the native
  // engine and the local server's relay share.
  .target(
    name: "WCSPeerConnection", dependencies: ["WCSProtocols", "WCSEventLoop", "COpenSSL"],
    swiftSettings: strict),
  // The native engine: NativeMediaBackend and its connections, tracks and sources.
  .target(
    name: "WCSEngine",
    dependencies: [
      "WCSMediaSeam", "WCSCodecs", "WCSProtocols", "WCSEventLoop", "WCSDevices",
      "WCSPeerConnection",
    ],
    swiftSettings: strict),
  // The umbrella: `import WCSMedia` sees every layer above.
  .target(
    name: "WCSMedia",
    dependencies: [
      "WCSMediaSeam", "WCSCodecs", "WCSProtocols", "WCSEventLoop", "WCSRecording", "WCSDevices",
      "WCSPeerConnection", "WCSEngine",
    ],
    swiftSettings: strict),
]

let swiftTargets: [Target] = [
  .target(name: "WCSTransport", dependencies: ["CWebSockets", "COpenSSL"], swiftSettings: strict),
  // The seam plus what it constructs: the engine (`NativeMediaBackend`), the played-frame
  // keeper and picture files (codecs) and the window display (devices).
  .target(
    name: "WCSApi2",
    dependencies: ["WCSTransport", "WCSMediaSeam", "WCSCodecs", "WCSDevices", "WCSEngine"],
    swiftSettings: strict),
  // Module names the iOS SDK uses, so `import FPWCSApi2Swift` compiles unchanged.
  .target(name: "FPWCSApi2", dependencies: ["WCSApi2"], swiftSettings: strict),
  .target(name: "FPWCSApi2Swift", dependencies: ["WCSApi2"], swiftSettings: strict),
  // The cores, the loop, peer connections and recording: no devices; FFmpeg decodes only a
  // pulled source's audio (transcoded to Opus).
  .target(
    name: "WCSLocalServer",
    dependencies: [
      "WCSTransport", "WCSCodecs", "WCSProtocols", "WCSEventLoop", "WCSPeerConnection",
      "WCSRecording", "CSIPGateway", "CFFmpeg", "CFFmpegConvert",
    ],
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
  "ClickToCall", "Conference", "ImageOverlay", "MediaDevices", "MultiPlayer", "Phone", "Player",
  "ScreenCapturer",
  "StreamRecording", "Streamer", "TwoPlayers", "TwoWayStreaming", "VideoChat",
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
// PictureBench: PNG/JPEG snapshots, the played-frame keeper's copy, decode-on-request.
// HardeningBench: what the inputs of issue 29 cost now (time, peak memory) against no limit.
// RoomBench: join → first frame in a room, and the server's CPU for rooms of 2/4/8.
// PushBench: an rtmpUrl push's own cost: Opus → AAC, FLV muxing of H.264 + AAC.
let mediaBenchmarks = [
  "CodecBench", "DevicesBench", "NativeBackendBench", "PeerConnectionBench", "PictureBench",
  "PipelineBench", "RTPBench", "SDPBench", "STUNBench", "PushBench",
]
let benchmarks: [Target] =
  mediaBenchmarks.map { name in
    .executableTarget(
      name: name,
      dependencies: ["BenchSupport", "WCSMedia", "CWebRTCCore", "CMediaDevices"]
        + (name == "PipelineBench" ? ["CColdCode"] : []),
      path: "Benchmarks/\(name)", swiftSettings: strict)
  } + [
    // Clocks, process CPU time and completion waits shared by the benchmarks.
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
      name: "LossBench",
      dependencies: ["BenchSupport", "FPWCSApi2Swift", "WCSLocalServer", "WCSMedia"],
      path: "Benchmarks/LossBench", swiftSettings: strict),
    .executableTarget(
      name: "SetupBench", dependencies: ["BenchSupport", "FPWCSApi2Swift", "WCSLocalServer"],
      path: "Benchmarks/SetupBench", swiftSettings: strict),
    // ConnectBench: publish → PUBLISHING over direct UDP and through TURN (issue 27).
    .executableTarget(
      name: "ConnectBench",
      dependencies: ["BenchSupport", "FPWCSApi2Swift", "WCSLocalServer", "WCSMedia"],
      path: "Benchmarks/ConnectBench", swiftSettings: strict),
    .executableTarget(
      name: "HardeningBench", dependencies: ["WCSMedia", "WCSTransport", "WCSLocalServer"],
      path: "Benchmarks/HardeningBench", swiftSettings: strict),
    // TURNBench: connect time over TURN/UDP, TCP and TLS (coturn) and one TURN/TCP
    // allocation's throughput.
    .executableTarget(
      name: "TURNBench", dependencies: ["BenchSupport", "WCSPeerConnection"],
      path: "Benchmarks/TURNBench",
      swiftSettings: strict),
    .executableTarget(
      name: "CallBench",
      dependencies: [
        "BenchSupport", "FPWCSApi2Swift", "WCSLocalServer", "WCSMedia", "TestSupport",
      ],
      path: "Benchmarks/CallBench", swiftSettings: strict),
    .executableTarget(
      name: "RoomBench",
      dependencies: ["BenchSupport", "FPWCSApi2Swift", "WCSLocalServer", "WCSMedia"],
      path: "Benchmarks/RoomBench", swiftSettings: strict),
  ]

// MARK: - Tests

let tests: [Target] = [
  // What several test targets share: seeded randomness, the shared corpus's location.
  .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: strict),
  .testTarget(
    name: "CWebRTCCoreTests", dependencies: ["CWebRTCCore", "TestSupport"], swiftSettings: strict),
  .testTarget(
    name: "WCSTransportTests", dependencies: ["WCSTransport", "CWebRTCCore"],
    swiftSettings: strict),
  // InteropPeer and wcs-local-server are run as separate processes by the interop tests
  // (Chromium, the `wcs` scenario): depending on them makes building the tests build them.
  .testTarget(
    name: "WCSMediaTests",
    dependencies: [
      "WCSMedia", "CWebRTCCore", "CMediaDevices", "InteropPeer", "wcs-local-server", "TestSupport",
    ],
    swiftSettings: strict),
  .testTarget(
    name: "WCSApi2Tests",
    dependencies: [
      "WCSApi2", "WCSTransport", "WCSMedia", "FPWCSApi2Swift", "WCSLocalServer", "TestSupport",
    ],
    swiftSettings: strict),
  .testTarget(
    name: "WCSLocalServerTests",
    dependencies: ["WCSLocalServer", "WCSTransport", "WCSMedia", "TestSupport"],
    swiftSettings: strict),
  // LossBench: KernelLossRecoveryTests run its `--child` mode under real kernel drops.
  .testTarget(
    name: "ExamplesTests",
    dependencies: [
      "ExampleSupport", "WCSLocalServer", "FPWCSApi2Swift", "WCSMedia", "LossBench", "TestSupport",
    ],
    swiftSettings: strict),
]

// MARK: - Fuzzing

// libFuzzer targets, one per parser family (`scripts/fuzz.sh TARGET SECONDS` builds them with
// -sanitize=fuzzer,address -DFUZZING); a plain build makes them replay programs
// (`swift run FuzzSDP FILE...`). FuzzCorpusTests replays the committed crash-regression corpus.
let fuzzNames = [
  "SDP", "STUN", "TURN", "RTP", "RTCP", "VP8", "WCSClient", "WCSServer", "WebSocket",
  "H264", "Stream", "CallMedia", "VP8Decoder", "ICE", "Pull",
]
let fuzzing: [Target] =
  [
    .target(
      name: "FuzzTargets", dependencies: ["WCSMedia", "WCSTransport", "WCSApi2", "WCSLocalServer"],
      path: "Fuzz/FuzzTargets", swiftSettings: strict),
    .testTarget(
      name: "FuzzCorpusTests", dependencies: ["FuzzTargets"], exclude: ["FuzzCorpus"],
      swiftSettings: strict),
  ]
  + fuzzNames.map { name in
    .executableTarget(
      name: "Fuzz\(name)", dependencies: ["FuzzTargets"], path: "Fuzz/Fuzz\(name)",
      swiftSettings: strict)
  }

let package = Package(
  name: "WCSApi2",
  platforms: [.macOS(.v13)],
  products: [
    .library(name: "WCSApi2", targets: ["WCSApi2", "FPWCSApi2", "FPWCSApi2Swift"]),
    .library(name: "WCSLocalServer", targets: ["WCSLocalServer"]),
    .executable(name: "wcs-local-server", targets: ["wcs-local-server"]),
    .executable(name: "wcs-demo", targets: ["wcs-demo"]),
  ],
  targets: cTargets + mediaTargets + swiftTargets + programs + examples + benchmarks + tests
    + fuzzing
)
