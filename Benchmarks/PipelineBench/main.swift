// The media pipeline's own cost, 640x480@30 VP8 and H.264 (1 Mbit/s each, one after the other
// in the same run) + mono Opus from the virtual camera and microphone, far ends in a child process (this executable as `peer-sink` /
// `peer-publisher`) so only our side is counted:
//  1. publish: process CPU of the whole publish path (capture, encode, packetize, RTP/RTCP,
//     SRTP, UDP) against a raw loop encoding the same pictures and sound with VP8Encoder (or
//     H264Encoder) and OpusEncoder at the same settings, per frame;
//  2. play: the whole play path (UDP, SRTP, jitter buffer, depacketize, decode, render hand-off)
//     against a raw loop decoding the same pictures (encoded beforehand at the same settings);
//  3. resident memory per additional played stream (1 → 10 players of one stream), less the
//     decoder buffers, measured by opening as many decoders on their own (VP8 only).
// Parts 1 and 2 compare against three references: the CPU the path itself spent inside the
// codec calls (its `DetailedStatistics` codec CPU times, thread CPU clock around each call,
// so both sides run under the same conditions: the first figure), and raw loops over the same
// media, paced in real time and back to back (on a virtual machine a loop paced in real time
// costs 25–60 % more than back to back, and the two loops run minutes apart from the path, so
// these vary by ±10 points between runs). Part 2 also runs a minimal receiver of the same media
// (RawReceive.swift: poll, recv, libsrtp, libvpx and libopus called directly) for what any
// receiver pays here beyond decoding, and the play path's CPU beyond that floor (VP8 only). It counts
// the wake-ups of both (voluntary context switches) and prices the play path's with an idle
// `EventLoop` timer sleeping 20 ms as the play path does: on a virtual machine one such wake-up
// costs tens of µs of CPU, so at one per 20 ms audio turn they are several points of the figure.
// Run: `swift run -c release PipelineBench [seconds] [--codec vp8|h264|both]` (default 8 s per
// measurement, both codecs).
// `PipelineBench socket-path [seconds]`: the UDP socket path alone, with and without network
// emulation (SocketPath.swift).
// `PipelineBench file-publish [seconds]`: an H.264 file published as it is against decoded and
// encoded again (FilePublish.swift).
import BenchSupport
import Foundation
import Synchronization
import WCSMedia

let arguments = Array(CommandLine.arguments.dropFirst())
if let mode = arguments.first, mode.hasPrefix("peer-") {
  let codec = arguments.count > 1 ? BenchCodec(rawValue: arguments[1]) ?? .vp8 : .vp8
  try BenchPeer(codec: codec).serve(mode: mode)
}
let duration = arguments.compactMap { Double($0) }.first ?? 8
let camera = VirtualCamera(
  width: PipelineSettings.width, height: PipelineSettings.height,
  frameRate: PipelineSettings.frameRate)
let microphone = VirtualMicrophone()
// After the globals above, which the raw sender uses.
if arguments.first == "raw-sender" { try runRawSender() }
if arguments.first == "play-only" {
  try runPlayOnly(duration: duration, decodesVideoOnLoop: !arguments.contains("queue"))
}
if arguments.first == "raw-receive" {
  // `raw-receive [seconds] [code lines]`
  let coldCodeLines = arguments.count > 2 ? UInt32(arguments[2]) ?? 0 : 0
  try runRawReceive(duration: duration, coldCodeLines: coldCodeLines)
}
if arguments.first == "socket-path" { try runSocketPath(duration: duration) }
if arguments.first == "decode-only" { try runDecodeOnly(duration: duration) }
if arguments.first == "publish-only" { try runPublishOnly(duration: duration) }
if arguments.first == "file-publish" { try runFilePublish(duration: duration) }
if arguments.first == "idle-loop" {
  // `idle-loop [seconds] [period ms]`
  let period = arguments.count > 2 ? Int(arguments[2]) ?? 5 : 5
  runIdleLoop(duration: duration, period: .milliseconds(period))
}

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
func seconds(_ value: Double) -> String { String(format: "%.3f s", value) }
func megabytes(_ value: Double) -> String { String(format: "%.2f MB", value / 1_048_576) }

// MARK: - 1. Publish

struct PublishRun {
  var cpu = 0.0
  /// CPU inside the video encoder + libopus during the run, from the pipeline's own counters.
  var codecCPU = 0.0
  /// CPU the virtual camera and microphone spent drawing during the run (same counters).
  var sourceCPU = 0.0
  var firstFrame = 0
  var frames = 0
  var firstAudio = 0
  var audioFrames = 0
  /// The negotiated video codec, as in `a=rtpmap`.
  var videoCodec = ""
}

func measurePublish(
  announce: String? = nil, request: MediaConnectionRequest = PipelineSettings.publishRequest
) throws -> PublishRun {
  let loop = EventLoop(label: "PipelineBench.publish")
  defer { loop.shutdown() }
  let backend = NativeMediaBackend(
    configuration: NativeMediaBackend.Configuration(loop: loop, peerConnection: .loopback))
  let sink = try PeerProcess(mode: "peer-sink")
  defer { sink.stop() }
  let state = Mutex(MediaConnectionState.new)
  guard
    let connection = try backend.makeConnection(
      request, onStateChange: { value in state.withLock { $0 = value } })
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
  if let announce { print("\(announce): measuring \(Int(duration)) s (pid \(getpid()))") }
  Thread.sleep(forTimeInterval: duration)
  let cpu = processCPUSeconds() - cpuStart
  let after = statistics(connection)
  return PublishRun(
    cpu: cpu,
    codecCPU: after.videoEncodeCPUTime + after.audioEncodeCPUTime - before.videoEncodeCPUTime
      - before.audioEncodeCPUTime, sourceCPU: after.sourceCPUTime - before.sourceCPUTime,
    firstFrame: before.framesEncoded,
    frames: after.framesEncoded + after.framesPassedThrough - before.framesEncoded
      - before.framesPassedThrough, firstAudio: before.audioFramesEncoded,
    audioFrames: after.audioFramesEncoded - before.audioFramesEncoded,
    videoCodec: after.videoCodec)
}

/// Runs `video(k)` for k in 0..<frames and `audio(k)` for k in 0..<audioFrames, either back to
/// back or paced in real time (a picture every 1/30 s, a sound frame every 20 ms) as the
/// pipeline runs them, so both meet the same cache and scheduling conditions; returns the CPU.
func timed(
  paced: Bool, frames: Int, audioFrames: Int, video: (Int) throws -> Void,
  audio: (Int) throws -> Void
) rethrows -> Double {
  let start = Date()
  let cpuStart = processCPUSeconds()
  var audioDone = 0
  for frame in 0..<frames {
    if paced {
      let due = Double(frame) / Double(PipelineSettings.frameRate)
      let wait = due - Date().timeIntervalSince(start)
      if wait > 0 { Thread.sleep(forTimeInterval: wait) }
    }
    try video(frame)
    let audioDue = paced ? min(audioFrames, Int(Date().timeIntervalSince(start) * 50) + 1) : 0
    while audioDone < audioDue {
      try audio(audioDone)
      audioDone += 1
    }
  }
  while audioDone < audioFrames {
    try audio(audioDone)
    audioDone += 1
  }
  return processCPUSeconds() - cpuStart
}

/// CPU of generating pictures/sound `range`s only, and of generating + encoding them (back to
/// back, and paced in real time).
func measureRawEncode(_ run: PublishRun, codec: BenchCodec = .vp8) throws -> (
  generate: Double, generateAndEncode: Double, paced: Double
) {
  let videoRange = run.firstFrame..<(run.firstFrame + run.frames)
  let audioRange = run.firstAudio..<(run.firstAudio + run.audioFrames)
  var sink = 0
  let start = processCPUSeconds()
  for index in videoRange { sink &+= Int(camera.frame(index).y[0]) }
  for index in audioRange { sink &+= Int(microphone.frame(index).samples[0]) }
  let generate = processCPUSeconds() - start

  /// Encoders in the state of the published ones: the frames before are encoded first,
  /// unmeasured.
  func warmEncoders() throws -> ((I420Image, UInt32) throws -> [EncodedVideoFrame], OpusEncoder) {
    let video = try codec.makeEncoder()
    let audio = try OpusEncoder(
      configuration: OpusEncoder.Configuration(channels: 1, bitrate: 32_000))
    for index in 0..<run.firstFrame {
      sink &+= try video(camera.frame(index), camera.rtpTimestamp(frameIndex: index)).count
    }
    for index in 0..<run.firstAudio { sink &+= try audio.encode(microphone.frame(index)).count }
    return (video, audio)
  }
  func encode(paced: Bool) throws -> Double {
    let (video, audio) = try warmEncoders()
    return try timed(paced: paced, frames: run.frames, audioFrames: run.audioFrames) { k in
      let index = run.firstFrame + k
      sink &+= try video(camera.frame(index), camera.rtpTimestamp(frameIndex: index)).count
    } audio: { k in
      sink &+= try audio.encode(microphone.frame(run.firstAudio + k)).count
    }
  }
  let total = try encode(paced: false)
  let paced = try encode(paced: true)
  if sink == 42 { print("") }  // keeps the loops from being optimized away
  return (generate, total, paced)
}

// MARK: - 2. Play

struct Player {
  let connection: NativeMediaConnection
  let renderer: CountingRenderer
}

func addPlayer(
  backend: NativeMediaBackend, peer: PeerProcess, codec: BenchCodec = .vp8
) throws -> Player {
  let renderer = CountingRenderer()
  let request = codec.restricting(
    MediaConnectionRequest(direction: .play, audio: .init(), video: .init(), renderer: renderer))
  guard
    let connection = try backend.makeConnection(request, onStateChange: { _ in })
      as? NativeMediaConnection
  else { throw PipelineBenchError.peer("not a NativeMediaConnection") }
  let offer = try wait { connection.createOffer(completion: $0) }.get()
  let answer = try peer.answer(offer)
  try wait { connection.setRemoteAnswer(answer, completion: $0) }.get()
  return Player(connection: connection, renderer: renderer)
}

/// Encodes pictures 0..<count and sound 0..<audioCount as the publisher does (not measured).
func encodedStream(frames count: Int, audio audioCount: Int, codec: BenchCodec = .vp8) throws -> (
  video: [[UInt8]], audio: [[UInt8]]
) {
  let video = try codec.makeEncoder()
  let audio = try OpusEncoder(
    configuration: OpusEncoder.Configuration(channels: 1, bitrate: 32_000))
  var pictures: [[UInt8]] = []
  for index in 0..<count {
    for frame in try video(camera.frame(index), camera.rtpTimestamp(frameIndex: index)) {
      pictures.append(frame.data)
    }
  }
  let sound = try (0..<audioCount).map { try audio.encode(microphone.frame($0)) }
  return (pictures, sound)
}

/// CPU of decoding `stream` (pictures from `warmUp` on, all of the sound), back to back or
/// paced in real time.
func measureRawDecode(
  _ stream: (video: [[UInt8]], audio: [[UInt8]]), warmUp: Int, paced: Bool,
  codec: BenchCodec = .vp8
) throws -> Double {
  let video = try codec.makeDecoder()
  let audio = try OpusDecoder(channels: 1)
  var sink = 0
  for data in stream.video.prefix(warmUp) { sink &+= try video(data) }
  let pictures = Array(stream.video.dropFirst(warmUp))
  let cpu = try timed(paced: paced, frames: pictures.count, audioFrames: stream.audio.count) {
    sink &+= try video(pictures[$0])
  } audio: {
    sink &+= try audio.decode(stream.audio[$0]).samples.count
  }
  if sink == 42 { print("") }
  return cpu
}

// MARK: - Run

func median(_ values: [Double]) -> Double {
  let sorted = values.sorted()
  return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

/// Per repetition: (path − less − reference) / reference, the share of the path's CPU beyond
/// the reference (both per picture).
func overhead(_ path: [Double], less: [Double]? = nil, over reference: [Double]) -> [Double] {
  let less = less ?? Array(repeating: 0, count: path.count)
  return zip(zip(path, less), reference).map { ($0.0 - $0.1 - $1) / max($1, 1e-9) }
}

func list(_ values: [Double], _ format: (Double) -> String) -> String {
  values.map(format).joined(separator: ", ")
}

/// One figure line: the label padded to one column, then the values.
func row(_ label: String, _ values: String) {
  print("   " + (label + ":").padding(toLength: 38, withPad: " ", startingAt: 0) + values)
}

// The machine is shared, so each comparison runs `repetitions` times, interleaved, and the
// median is the figure.
let repetitions = 3
let codecs: [BenchCodec]
do { codecs = try BenchCodec.selected(from: arguments) } catch {
  if case .peer(let message) = error as? PipelineBenchError { print("PipelineBench: \(message)") }
  exit(2)
}
print(
  "PipelineBench: \(PipelineSettings.width)x\(PipelineSettings.height)@\(PipelineSettings.frameRate) \(codecs.map(\.name).joined(separator: " and ")) \(PipelineSettings.bitrateKbps) kbit/s + Opus mono 32 kbit/s, \(Int(duration)) s per measurement, \(repetitions) repetitions (median)"
)

/// Part 1 for `codec`: prints the publish path's CPU against the raw encoding loops.
func comparePublish(_ codec: BenchCodec) throws {
  var publishPath: [Double] = []
  var encodeBatch: [Double] = []
  var encodePaced: [Double] = []
  var sources: [Double] = []
  var publishFrames: [Int] = []
  var encodeInside: [Double] = []
  var sourcesInside: [Double] = []
  for _ in 0..<repetitions {
    let publish = try measurePublish(request: codec.restricting(PipelineSettings.publishRequest))
    try codec.check(negotiated: publish.videoCodec)
    let raw = try measureRawEncode(publish, codec: codec)
    let perPicture = 1 / Double(max(1, publish.frames))
    publishPath.append(publish.cpu * perPicture)
    encodeInside.append(publish.codecCPU * perPicture)
    sourcesInside.append(publish.sourceCPU * perPicture)
    sources.append(raw.generate * perPicture)
    encodeBatch.append((raw.generateAndEncode - raw.generate) * perPicture)
    encodePaced.append((raw.paced - raw.generate) * perPicture)
    publishFrames.append(publish.frames)
  }
  let publishOverheadPaced = overhead(publishPath, less: sources, over: encodePaced)
  let publishOverheadBatch = overhead(publishPath, less: sources, over: encodeBatch)
  let publishOverheadInside = overhead(publishPath, less: sourcesInside, over: encodeInside)
  let codecs = "\(codec.encoderLibrary) + libopus"
  print(
    "1. publish \(codec.name), CPU per published picture (its share of the 20 ms Opus frames included)"
  )
  row("pictures per run", "\(publishFrames)")
  row("full publish path", list(publishPath, milliseconds))
  row("virtual sources alone", list(sources, milliseconds))
  row("virtual sources inside the path", list(sourcesInside, milliseconds))
  row("raw \(codecs), batch", list(encodeBatch, milliseconds))
  row("raw \(codecs), real time", list(encodePaced, milliseconds))
  row("\(codecs) inside the path", list(encodeInside, milliseconds))
  row(
    "SDK CPU beyond raw encoding",
    "\(percent(median(publishOverheadInside))) vs the codec calls inside the path (less the sources inside it), \(percent(median(publishOverheadPaced))) vs the real-time loop, \(percent(median(publishOverheadBatch))) vs the batch loop (median; target ≤ 15 %)"
  )
}

/// What part 3 needs of part 2: its publisher, encoded stream and last player, still open.
struct PlayRun {
  let publisher: PeerProcess
  let stream: (video: [[UInt8]], audio: [[UInt8]])
  let player: Player
}

/// Part 2 for `codec`: prints the play path's CPU against the raw decoding loops (and, for
/// VP8, the minimal receiver); the last player and its publisher stay open.
func comparePlay(_ codec: BenchCodec, backend: NativeMediaBackend) throws -> PlayRun {
  let publisher = try PeerProcess(mode: "peer-publisher", codec: codec)
  let warmUp = 30
  let stream = try encodedStream(
    frames: warmUp + Int(duration) * PipelineSettings.frameRate, audio: Int(duration) * 50,
    codec: codec)
  let rawPictures = Double(stream.video.count - warmUp)
  // The minimal receiver calls libvpx directly, so it is VP8's floor only.
  let withFloor = codec == .vp8
  var playPath: [Double] = []
  var decodeBatch: [Double] = []
  var decodePaced: [Double] = []
  var playFrames: [Int] = []
  var decodeInside: [Double] = []
  var floorPath: [Double] = []
  var floorCodec: [Double] = []
  var playWakeUps: [Double] = []
  var floorWakeUps: [Double] = []
  var wakeUpPrices: [Double] = []
  var last: Player?
  for repetition in 0..<repetitions {
    // Before this repetition's receivers start (the previous player is closed).
    wakeUpPrices.append(measureWakeUpPrice(span: 3))
    decodeBatch.append(
      try measureRawDecode(stream, warmUp: warmUp, paced: false, codec: codec) / rawPictures)
    decodePaced.append(
      try measureRawDecode(stream, warmUp: warmUp, paced: true, codec: codec) / rawPictures)
    if withFloor {
      let floor = try measureRawReceive(duration: duration)
      floorPath.append(floor.cpu / Double(max(1, floor.pictures)))
      floorCodec.append(floor.codecCPU / Double(max(1, floor.pictures)))
      floorWakeUps.append(Double(floor.wakeUps) / Double(max(1, floor.pictures)))
    }
    let player = try addPlayer(backend: backend, peer: publisher, codec: codec)
    try waitUntil("player renders") { player.renderer.count.withLock { $0 } >= 30 }
    Thread.sleep(forTimeInterval: 1)
    let before = statistics(player.connection)
    let cpuStart = processCPUSeconds()
    let wakeStart = processWakeUps()
    Thread.sleep(forTimeInterval: duration)
    let cpu = processCPUSeconds() - cpuStart
    let wakeUps = processWakeUps() - wakeStart
    let after = statistics(player.connection)
    try codec.check(negotiated: after.videoCodec)
    let decoded = after.framesDecoded - before.framesDecoded
    playPath.append(cpu / Double(max(1, decoded)))
    playWakeUps.append(Double(wakeUps) / Double(max(1, decoded)))
    let codecCPU =
      after.videoDecodeCPUTime + after.audioDecodeCPUTime - before.videoDecodeCPUTime
      - before.audioDecodeCPUTime
    decodeInside.append(codecCPU / Double(max(1, decoded)))
    playFrames.append(decoded)
    if repetition == repetitions - 1 { last = player } else { player.connection.close() }
  }
  let playOverheadPaced = overhead(playPath, over: decodePaced)
  let playOverheadBatch = overhead(playPath, over: decodeBatch)
  let playOverheadInside = overhead(playPath, over: decodeInside)
  let codecs = "\(codec.decoderLibrary) + libopus"
  print("2. play \(codec.name), CPU per decoded picture (its share of the Opus frames included)")
  row("pictures per run", "\(playFrames)")
  row("full play path", list(playPath, milliseconds))
  row("raw \(codecs), batch", list(decodeBatch, milliseconds))
  row("raw \(codecs), real time", list(decodePaced, milliseconds))
  row("\(codecs) inside the path", list(decodeInside, milliseconds))
  let perSecond = Double(PipelineSettings.frameRate)
  let wakeUpsPerSecond = { (values: [Double]) in
    list(values.map { $0 * perSecond }, { String(format: "%.0f", $0) })
  }
  if withFloor {
    let floorOverhead = overhead(floorPath, over: floorCodec)
    let playOverheadFloor = overhead(playPath, less: floorPath, over: floorCodec).map { $0 + 1 }
    row("minimal receiver (raw-receive)", list(floorPath, milliseconds))
    row("libvpx + libopus inside it", list(floorCodec, milliseconds))
    row(
      "the minimal receiver's own CPU",
      "\(percent(median(floorOverhead))) beyond its codec calls (median): waking up for packets, recv, libsrtp"
    )
    row(
      "play path beyond it",
      "\(percent(median(playOverheadFloor))) of its codec calls (median): all the SDK does beyond it, the copy of each picture out of libvpx included"
    )
    row(
      "wake-ups a second",
      "play path \(wakeUpsPerSecond(playWakeUps)), minimal receiver \(wakeUpsPerSecond(floorWakeUps)) (voluntary context switches, all threads)"
    )
  } else {
    row(
      "wake-ups a second",
      "play path \(wakeUpsPerSecond(playWakeUps)) (voluntary context switches, all threads)")
  }
  // Wake-ups per picture × the idle loop's price per wake-up, as a share of the codec calls.
  let playWakeShare = (0..<repetitions).map {
    playWakeUps[$0] * wakeUpPrices[$0] / max(decodeInside[$0], 1e-12)
  }
  row(
    "one wake-up here",
    "\(list(wakeUpPrices, { String(format: "%.1f µs", $0 * 1e6) })) of CPU (an idle EventLoop timer every 20 ms, 3 s before each repetition)"
  )
  row(
    "the play path's wake-ups",
    "\(percent(median(playWakeShare))) of its codec calls at that price (median); all else it does beyond them: \(percent(median(zip(playOverheadInside, playWakeShare).map { $0 - $1 })))"
      + (withFloor
        ? " (the minimal receiver's are shorter sleeps, which cost less, so they are not priced this way)"
        : "")
  )
  row(
    "SDK CPU beyond raw decoding",
    "\(percent(median(playOverheadInside))) vs the codec calls inside the path, \(percent(median(playOverheadPaced))) vs the real-time loop, \(percent(median(playOverheadBatch))) vs the batch loop (median; target ≤ 15 %)"
  )
  guard let last else { throw PipelineBenchError.peer("no player") }
  return PlayRun(publisher: publisher, stream: stream, player: last)
}

/// Part 3 (VP8): resident memory from 1 to 10 players of `run`'s publisher, less the decoder
/// buffers.
func measureMemory(_ run: PlayRun, backend: NativeMediaBackend) throws {
  var players = [run.player]
  let residentOne = residentBytes()
  for _ in players.count..<10 {
    players.append(try addPlayer(backend: backend, peer: run.publisher))
  }
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
    for data in run.stream.video.prefix(60) { _ = try video.decode(data) }
    for packet in run.stream.audio.prefix(50) { _ = try audio.decode(packet) }
    decoders.append((video, audio))
  }
  let residentDecoders = residentBytes()
  let perStream = Double(residentTen - residentOne) / 9
  let decoderBuffers = Double(residentDecoders - residentTen) / 9
  let pictureBytes = Double(PipelineSettings.width * PipelineSettings.height * 3 / 2)
  // libvpx's VP8 decoder keeps 4 frame buffers (last, golden, altref, new) with 32-pixel
  // borders; our decode pipeline adds one output picture.
  let borderedBytes = Double(
    (PipelineSettings.width + 64) * (PipelineSettings.height + 64) * 3 / 2)
  let decoderEstimate = 4 * borderedBytes + pictureBytes
  print("3. memory, VP8 (RSS from /proc/self/statm, free heap trimmed before each reading)")
  print(
    "   1 player: \(megabytes(Double(residentOne))), 10 players: \(megabytes(Double(residentTen)))"
  )
  print("   per additional played stream, everything included: \(megabytes(perStream))")
  print(
    "   decoder buffers per stream: measured (9 extra decoders) \(megabytes(decoderBuffers)), estimated (4 bordered frames + 1 picture) \(megabytes(decoderEstimate))"
  )
  print(
    "   per additional stream excluding decoder buffers: \(megabytes(perStream - decoderEstimate)) with the estimate, \(megabytes(perStream - decoderBuffers)) with the measurement (target ≤ 5 MB)"
  )
  let rendered = players.map { $0.renderer.count.withLock { $0 } }
  print("   pictures rendered per player: \(rendered)")
  withExtendedLifetime(decoders) {}
  for player in players.dropFirst() { player.connection.close() }
}

let loop = EventLoop(label: "PipelineBench.play")
let backend = NativeMediaBackend(
  configuration: NativeMediaBackend.Configuration(loop: loop, peerConnection: .loopback))
// Each codec's publish, play (and VP8's memory) before the next codec's, so no player of one
// is open while the other is measured.
for codec in codecs {
  try comparePublish(codec)
  let play = try comparePlay(codec, backend: backend)
  if codec == .vp8 { try measureMemory(play, backend: backend) }
  play.player.connection.close()
  play.publisher.stop()
}
loop.shutdown()
