// The media pipeline's own cost, 640x480@30 VP8 (1 Mbit/s) + mono Opus from the virtual
// camera and microphone, far ends in a child process (this executable as `peer-sink` /
// `peer-publisher`) so only our side is counted:
//  1. publish: process CPU of the whole publish path (capture, encode, packetize, RTP/RTCP,
//     SRTP, UDP) against a raw loop encoding the same pictures and sound with VP8Encoder and
//     OpusEncoder at the same settings, per frame;
//  2. play: the whole play path (UDP, SRTP, jitter buffer, depacketize, decode, render hand-off)
//     against a raw loop decoding the same pictures (encoded beforehand at the same settings);
//  3. resident memory per additional played stream (1 → 10 players of one stream), less the
//     decoder buffers, measured by opening as many decoders on their own.
// Run: `swift run -c release PipelineBench [seconds]` (default 8 s per measurement).
import Foundation
import Synchronization
import WCSMedia

let arguments = Array(CommandLine.arguments.dropFirst())
if let mode = arguments.first, mode.hasPrefix("peer-") {
  try BenchPeer().serve(mode: mode)
}
let seconds = arguments.compactMap { Double($0) }.first ?? 8
let camera = VirtualCamera(
  width: PipelineSettings.width, height: PipelineSettings.height,
  frameRate: PipelineSettings.frameRate)
let microphone = VirtualMicrophone()

func waitUntil(_ what: String, timeout: Double = 30, _ condition: () -> Bool) throws {
  let deadline = Date().addingTimeInterval(timeout)
  while !condition() {
    guard Date() < deadline else { throw PipelineBenchError.peer("timed out: \(what)") }
    Thread.sleep(forTimeInterval: 0.05)
  }
}

func statistics(_ connection: NativeMediaConnection) -> NativeMediaConnection.DetailedStatistics {
  wait { connection.detailedStatistics(completion: $0) }
}

func percent(_ value: Double) -> String { String(format: "%.1f %%", value * 100) }
func milliseconds(_ value: Double) -> String { String(format: "%.3f ms", value * 1000) }
func megabytes(_ value: Double) -> String { String(format: "%.2f MB", value / 1_048_576) }

// MARK: - 1. Publish

struct PublishRun {
  var cpu = 0.0
  var firstFrame = 0
  var frames = 0
  var firstAudio = 0
  var audioFrames = 0
}

func measurePublish() throws -> PublishRun {
  let loop = EventLoop(label: "PipelineBench.publish")
  defer { loop.shutdown() }
  let backend = NativeMediaBackend(
    configuration: NativeMediaBackend.Configuration(loop: loop, peerConnection: .loopback))
  let sink = try PeerProcess(mode: "peer-sink")
  defer { sink.stop() }
  let state = Mutex(MediaConnectionState.new)
  guard
    let connection = try backend.makeConnection(
      PipelineSettings.publishRequest, onStateChange: { value in state.withLock { $0 = value } })
      as? NativeMediaConnection
  else { throw PipelineBenchError.peer("not a NativeMediaConnection") }
  defer { connection.close() }
  let offer = try wait { connection.createOffer(completion: $0) }.get()
  let answer = try sink.answer(offer)
  try wait { connection.setRemoteAnswer(answer, completion: $0) }.get()
  try waitUntil("publish connected") { state.withLock { $0 } == .connected }
  Thread.sleep(forTimeInterval: 1)  // past the first key frame and the encoder's start
  let before = statistics(connection)
  let cpuStart = processCPUSeconds()
  Thread.sleep(forTimeInterval: seconds)
  let cpu = processCPUSeconds() - cpuStart
  let after = statistics(connection)
  return PublishRun(
    cpu: cpu, firstFrame: before.framesEncoded,
    frames: after.framesEncoded - before.framesEncoded, firstAudio: before.audioFramesEncoded,
    audioFrames: after.audioFramesEncoded - before.audioFramesEncoded)
}

/// CPU of generating pictures/sound `range`s only, and of generating + encoding them.
func measureRawEncode(_ run: PublishRun) throws -> (generate: Double, generateAndEncode: Double) {
  let videoRange = run.firstFrame..<(run.firstFrame + run.frames)
  let audioRange = run.firstAudio..<(run.firstAudio + run.audioFrames)
  var sink = 0
  var start = processCPUSeconds()
  for index in videoRange { sink &+= Int(camera.frame(index).y[0]) }
  for index in audioRange { sink &+= Int(microphone.frame(index).samples[0]) }
  let generate = processCPUSeconds() - start

  let video = try VP8Encoder(configuration: PipelineSettings.encoderConfiguration)
  let audio = try OpusEncoder(
    configuration: OpusEncoder.Configuration(channels: 1, bitrate: 32_000))
  // The encoders reach the same state as the published ones: the frames before are encoded
  // first, unmeasured.
  for index in 0..<run.firstFrame {
    sink &+= try video.encode(
      camera.frame(index), timestamp: camera.rtpTimestamp(frameIndex: index)
    ).count
  }
  for index in 0..<run.firstAudio { sink &+= try audio.encode(microphone.frame(index)).count }
  start = processCPUSeconds()
  for index in videoRange {
    sink &+= try video.encode(
      camera.frame(index), timestamp: camera.rtpTimestamp(frameIndex: index)
    ).count
  }
  for index in audioRange { sink &+= try audio.encode(microphone.frame(index)).count }
  let total = processCPUSeconds() - start
  if sink == 42 { print("") }  // keeps the loops from being optimized away
  return (generate, total)
}

// MARK: - 2. Play

struct Player {
  let connection: NativeMediaConnection
  let renderer: CountingRenderer
}

func addPlayer(backend: NativeMediaBackend, peer: PeerProcess) throws -> Player {
  let renderer = CountingRenderer()
  guard
    let connection = try backend.makeConnection(
      MediaConnectionRequest(direction: .play, audio: .init(), video: .init(), renderer: renderer),
      onStateChange: { _ in }) as? NativeMediaConnection
  else { throw PipelineBenchError.peer("not a NativeMediaConnection") }
  let offer = try wait { connection.createOffer(completion: $0) }.get()
  let answer = try peer.answer(offer)
  try wait { connection.setRemoteAnswer(answer, completion: $0) }.get()
  return Player(connection: connection, renderer: renderer)
}

/// Encodes pictures 0..<count and sound 0..<audioCount as the publisher does (not measured).
func encodedStream(frames count: Int, audio audioCount: Int) throws -> (
  video: [[UInt8]], audio: [[UInt8]]
) {
  let video = try VP8Encoder(configuration: PipelineSettings.encoderConfiguration)
  let audio = try OpusEncoder(
    configuration: OpusEncoder.Configuration(channels: 1, bitrate: 32_000))
  var pictures: [[UInt8]] = []
  for index in 0..<count {
    for frame in try video.encode(
      camera.frame(index), timestamp: camera.rtpTimestamp(frameIndex: index))
    {
      pictures.append(frame.data)
    }
  }
  let sound = try (0..<audioCount).map { try audio.encode(microphone.frame($0)) }
  return (pictures, sound)
}

/// CPU of decoding `stream` (pictures from `warmUp` on, all of the sound).
func measureRawDecode(_ stream: (video: [[UInt8]], audio: [[UInt8]]), warmUp: Int) throws -> Double
{
  let video = try VP8Decoder()
  let audio = try OpusDecoder(channels: 1)
  var sink = 0
  for data in stream.video.prefix(warmUp) { sink &+= try video.decode(data)?.width ?? 0 }
  let start = processCPUSeconds()
  for data in stream.video.dropFirst(warmUp) { sink &+= try video.decode(data)?.width ?? 0 }
  for packet in stream.audio { sink &+= try audio.decode(packet).samples.count }
  let cpu = processCPUSeconds() - start
  if sink == 42 { print("") }
  return cpu
}

// MARK: - Run

print(
  "PipelineBench: \(PipelineSettings.width)x\(PipelineSettings.height)@\(PipelineSettings.frameRate) VP8 \(PipelineSettings.bitrateKbps) kbit/s + Opus mono 32 kbit/s, \(Int(seconds)) s per measurement"
)

let publish = try measurePublish()
let raw = try measureRawEncode(publish)
let encodeOnly = raw.generateAndEncode - raw.generate
let publishOverhead = (publish.cpu - raw.generateAndEncode) / max(encodeOnly, 1e-9)
print("1. publish (\(publish.frames) pictures, \(publish.audioFrames) Opus frames encoded)")
print(
  "   full publish path CPU:        \(String(format: "%.3f", publish.cpu)) s (\(milliseconds(publish.cpu / Double(max(1, publish.frames)))) per picture)"
)
print(
  "   raw generate + encode CPU:    \(String(format: "%.3f", raw.generateAndEncode)) s (virtual sources \(String(format: "%.3f", raw.generate)) s, libvpx + libopus \(String(format: "%.3f", encodeOnly)) s)"
)
print(
  "   SDK CPU beyond raw encoding:  \(percent(publishOverhead)) of the codec time (target ≤ 15 %)")

let loop = EventLoop(label: "PipelineBench.play")
let backend = NativeMediaBackend(
  configuration: NativeMediaBackend.Configuration(loop: loop, peerConnection: .loopback))
let publisher = try PeerProcess(mode: "peer-publisher")
var players = [try addPlayer(backend: backend, peer: publisher)]
try waitUntil("first player renders") { players[0].renderer.count.withLock { $0 } >= 30 }
Thread.sleep(forTimeInterval: 1)
let playBefore = statistics(players[0].connection)
let playCPUStart = processCPUSeconds()
Thread.sleep(forTimeInterval: seconds)
let playCPU = processCPUSeconds() - playCPUStart
let playAfter = statistics(players[0].connection)
let decodedFrames = playAfter.framesDecoded - playBefore.framesDecoded
let decodedAudio = playAfter.audioFramesDecoded - playBefore.audioFramesDecoded
let warmUp = 30
let stream = try encodedStream(frames: warmUp + decodedFrames, audio: decodedAudio)
let rawDecode = try measureRawDecode(stream, warmUp: warmUp)
let playOverhead = (playCPU - rawDecode) / max(rawDecode, 1e-9)
print("2. play (\(decodedFrames) pictures, \(decodedAudio) Opus frames decoded)")
print(
  "   full play path CPU:           \(String(format: "%.3f", playCPU)) s (\(milliseconds(playCPU / Double(max(1, decodedFrames)))) per picture)"
)
print("   raw libvpx + libopus decode:  \(String(format: "%.3f", rawDecode)) s")
print("   SDK CPU beyond raw decoding:  \(percent(playOverhead)) of the codec time (target ≤ 15 %)")

let residentOne = residentBytes()
for _ in 1..<10 { players.append(try addPlayer(backend: backend, peer: publisher)) }
try waitUntil("ten players render") {
  players.allSatisfy { $0.renderer.count.withLock { $0 } >= 30 }
}
Thread.sleep(forTimeInterval: 2)
let residentTen = residentBytes()
// Decoder buffers: nine more decoders of the same stream, on their own.
var decoders: [(VP8Decoder, OpusDecoder)] = []
for _ in 0..<9 {
  let video = try VP8Decoder()
  let audio = try OpusDecoder(channels: 1)
  for data in stream.video.prefix(60) { _ = try video.decode(data) }
  for packet in stream.audio.prefix(50) { _ = try audio.decode(packet) }
  decoders.append((video, audio))
}
let residentDecoders = residentBytes()
let perStream = Double(residentTen - residentOne) / 9
let decoderBuffers = Double(residentDecoders - residentTen) / 9
let pictureBytes = Double(PipelineSettings.width * PipelineSettings.height * 3 / 2)
print("3. memory (RSS from /proc/self/statm)")
print(
  "   1 player: \(megabytes(Double(residentOne))), 10 players: \(megabytes(Double(residentTen)))")
print("   per additional played stream: \(megabytes(perStream))")
print(
  "   decoder buffers per stream (measured, 9 extra decoders): \(megabytes(decoderBuffers)) (\(String(format: "%.1f", decoderBuffers / pictureBytes)) pictures of \(megabytes(pictureBytes)))"
)
print(
  "   per additional stream excluding decoder buffers: \(megabytes(perStream - decoderBuffers)) (target ≤ 5 MB)"
)
let rendered = players.map { $0.renderer.count.withLock { $0 } }
print("   pictures rendered per player: \(rendered)")
withExtendedLifetime(decoders) {}
for player in players { player.connection.close() }
publisher.stop()
loop.shutdown()
