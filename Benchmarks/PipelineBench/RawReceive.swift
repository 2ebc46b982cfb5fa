import BenchSupport
import CColdCode
import CWebRTCCore
import Foundation
import Synchronization
import WCSMedia

// The floor of any receiver on this machine: `PipelineBench raw-receive [seconds]` receives the
// same media as `play-only` (640x480@30 VP8 1 Mbit/s + Opus, SRTP AEAD-AES-128-GCM, UDP on
// 127.0.0.1, audio every 20 ms and video every 33 ms from a child process) with the least a
// receiver can do: one blocking poll per wake-up, recv until the socket is empty, libsrtp
// unprotect, the 12-byte RTP header, payloads joined up to the marker bit, then VP8Decoder and
// libopus as soon as a frame is whole, called directly (the picture is left in libvpx's buffer,
// the sound decoded into one reused buffer). No jitter buffer, no reordering, no loss handling, no
// RTCP, no sync. Its CPU beyond its own codec calls is what waking up for packets and taking
// them from the kernel costs here, whatever the receiver: `play-only`'s figure less this one is
// the SDK's own share.
//
// `raw-receive [seconds] [code lines]` also calls `wcs_cold_code_run` once a packet, right after
// libsrtp: that many more distinct code lines a packet, shuffled, each a few instructions. The
// rise of the figure with the lines is what a code line costs a packet here once libvpx and the
// wake-up have evicted it (about 1 point, 0.7-1.2, per 100 lines a packet on the 2-core nested VM of
// sessions 5-8), the yardstick for the SDK's own footprint per packet
// (`scripts/play-cache-misses.sh` counts it).

/// A fixed key for both ends (a benchmark on loopback; nothing is secret).
private let rawMasterKey = SRTPMasterKey(
  key: Array(repeating: 0x5A, count: 16), salt: Array(repeating: 0xA5, count: 12))
private let rawVideoPayloadType: UInt8 = 96
private let rawAudioPayloadType: UInt8 = 111
private let rawChunk = 1100

/// What `measureRawReceive` measured over its span.
struct RawReceiveRun {
  var cpu = 0.0
  var codecCPU = 0.0
  var videoCPU = 0.0
  var pictures = 0
  var packets = 0
  var bytes = 0
  /// Voluntary context switches over the measured span (`processWakeUps`).
  var wakeUps = 0
}

/// `PipelineBench raw-receive [seconds]`.
func runRawReceive(duration span: Double, coldCodeLines: UInt32 = 0) throws -> Never {
  let run = try measureRawReceive(
    duration: span, announce: "raw-receive", coldCodeLines: coldCodeLines)
  if coldCodeLines > 0 {
    print("raw-receive: \(coldCodeLines) more code lines a packet (wcs_cold_code_run)")
  }
  print(
    "raw-receive: \(run.pictures) pictures, \(seconds(run.cpu)) CPU, \(milliseconds(run.cpu / Double(max(1, run.pictures)))) per picture, \(percent((run.cpu - run.codecCPU) / max(run.codecCPU, 1e-9))) beyond the codec calls"
  )
  print(
    "raw-receive: \(run.packets) packets, \(Int(Double(run.bytes) * 8 / span / 1000)) kbit/s; VP8 \(milliseconds(run.videoCPU / Double(max(1, run.pictures)))) per picture, Opus \(milliseconds((run.codecCPU - run.videoCPU) / span)) per second"
  )
  // Not priced as play-only's are: its sleeps are a few ms between packet bursts, and a short
  // sleep costs less than the 20 ms one the idle loop measures.
  print("raw-receive: \(Int(Double(run.wakeUps) / span)) wake-ups a second")
  exit(0)
}

/// Receives the raw sender's media for 3 s (warm-up) + `span` seconds and measures the last
/// `span`: process CPU, CPU inside libvpx/libopus (thread CPU clock around each call), pictures.
/// `coldCodeLines`: distinct code lines touched a packet on top (`wcs_cold_code_run`).
func measureRawReceive(
  duration span: Double, announce: String? = nil, coldCodeLines: UInt32 = 0
) throws -> RawReceiveRun {
  let socket = try RawUDPSocket()
  let srtp = try SRTPSession(profile: .aeadAES128GCM, masterKey: rawMasterKey, direction: .inbound)
  let video = try RawVP8Decoder()
  let audio = try RawOpusDecoder()
  let sender = try PeerProcess(mode: "raw-sender")
  defer { sender.stop() }
  sender.send("\(socket.port)")
  var buffer = [UInt8](repeating: 0, count: 2048)
  var frame: [UInt8] = []
  var run = RawReceiveRun()
  var cpuStart = 0.0
  var wakeStart = 0
  var measuring = false
  let start = Date()
  var sink = 0
  while true {
    let elapsed = Date().timeIntervalSince(start)
    if !measuring, elapsed >= 3 {
      // Past the first key frame and the sender's start, as play-only waits.
      measuring = true
      run = RawReceiveRun()
      cpuStart = processCPUSeconds()
      wakeStart = processWakeUps()
      if let announce { print("\(announce): measuring \(Int(span)) s (pid \(getpid()))") }
    }
    if measuring, elapsed >= 3 + span { break }
    guard socket.waitReadable() else { continue }
    while true {
      let length = buffer.withUnsafeMutableBytes { socket.receive(into: $0) }
      guard length >= 12 else { break }
      run.packets += 1
      run.bytes += length
      guard
        let plain = try? buffer.withUnsafeMutableBytes({ try srtp.unprotectRTP($0, length: length) }
        ),
        plain >= 12
      else { continue }
      if coldCodeLines > 0 {
        sink &+= Int(truncatingIfNeeded: wcs_cold_code_run(coldCodeLines, UInt64(run.packets)))
      }
      let payloadType = buffer[1] & 0x7F
      let marker = buffer[1] & 0x80 != 0
      let before = threadCPUSeconds()
      if payloadType == rawAudioPayloadType {
        sink &+= buffer.withUnsafeBytes {
          audio.decode(UnsafeRawBufferPointer(rebasing: $0[12..<plain]))
        }
        run.codecCPU += threadCPUSeconds() - before
      } else if payloadType == rawVideoPayloadType {
        frame.append(contentsOf: buffer[12..<plain])
        if marker {
          let decodeStart = threadCPUSeconds()
          sink &+= video.decode(frame)
          let spent = threadCPUSeconds() - decodeStart
          run.codecCPU += spent
          run.videoCPU += spent
          frame.removeAll(keepingCapacity: true)
          run.pictures += 1
        }
      }
    }
  }
  run.cpu = processCPUSeconds() - cpuStart
  run.wakeUps = processWakeUps() - wakeStart
  if sink == 42 { print("") }
  return run
}

/// `raw-sender`: reads the receiver's port, then sends the virtual camera (VP8, encoded as
/// it goes) and microphone (Opus) in real time, SRTP-protected, until its stdin closes.
func runRawSender() throws -> Never {
  guard let line = readLine(), let port = UInt16(line.trimmingCharacters(in: .whitespaces)) else {
    exit(1)
  }
  let socket = try RawUDPSocket()
  let srtp = try SRTPSession(
    profile: .aeadAES128GCM, masterKey: rawMasterKey, direction: .outbound)
  let encoder = try VP8Encoder(configuration: PipelineSettings.encoderConfiguration)
  let opus = try OpusEncoder(configuration: OpusEncoder.Configuration(channels: 1, bitrate: 32_000))
  let done = Mutex(false)
  Thread.detachNewThread {
    while readLine() != nil {}
    done.withLock { $0 = true }
  }
  var videoSequence: UInt16 = 0
  var audioSequence: UInt16 = 0
  var frameIndex = 0
  var audioIndex = 0
  let start = Date()
  func send(
    _ payload: ArraySlice<UInt8>, type: UInt8, marker: Bool, sequence: UInt16, ssrc: UInt32,
    timestamp: UInt32
  ) {
    var packet: [UInt8] = [0x80, type | (marker ? 0x80 : 0)]
    packet += [UInt8(sequence >> 8), UInt8(sequence & 0xFF)]
    packet += withUnsafeBytes(of: timestamp.bigEndian, Array.init)
    packet += withUnsafeBytes(of: ssrc.bigEndian, Array.init)
    packet += payload
    guard (try? srtp.protectRTP(&packet)) != nil else { return }
    socket.send(packet, toPort: port)
  }
  while !done.withLock({ $0 }) {
    let now = Date().timeIntervalSince(start)
    let videoDue = Double(frameIndex) / Double(PipelineSettings.frameRate)
    let audioDue = Double(audioIndex) * 0.02
    let next = min(videoDue, audioDue)
    if next > now {
      Thread.sleep(forTimeInterval: next - now)
      continue
    }
    if audioDue <= videoDue {
      let data = try opus.encode(microphone.frame(audioIndex))
      send(
        data[...], type: rawAudioPayloadType, marker: true, sequence: audioSequence, ssrc: 2,
        timestamp: UInt32(truncatingIfNeeded: audioIndex * 960))
      audioSequence &+= 1
      audioIndex += 1
    } else {
      let timestamp = camera.rtpTimestamp(frameIndex: frameIndex)
      for encoded in try encoder.encode(camera.frame(frameIndex), timestamp: timestamp) {
        var offset = 0
        while offset < encoded.data.count {
          let end = min(offset + rawChunk, encoded.data.count)
          send(
            encoded.data[offset..<end], type: rawVideoPayloadType,
            marker: end == encoded.data.count, sequence: videoSequence, ssrc: 1,
            timestamp: timestamp)
          videoSequence &+= 1
          offset = end
        }
      }
      frameIndex += 1
    }
  }
  exit(0)
}

/// A non-blocking UDP socket on 127.0.0.1 with an ephemeral port, through the C socket calls.
final class RawUDPSocket {
  let descriptor: Int32
  let port: UInt16

  init() throws {
    let fd = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    guard fd >= 0 else { throw PipelineBenchError.peer("socket: errno \(errno)") }
    var size: Int32 = 4 << 20
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    var address = Self.loopback(port: 0)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0 else {
      close(fd)
      throw PipelineBenchError.peer("bind: errno \(errno)")
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    descriptor = fd
    port = UInt16(bigEndian: address.sin_port)
  }

  deinit { close(descriptor) }

  static func loopback(port: UInt16) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    return address
  }

  /// Blocks until a datagram is waiting (or a 100 ms timeout passes): false on timeout.
  func waitReadable() -> Bool {
    var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    return poll(&entry, 1, 100) > 0
  }

  /// One datagram into `buffer`, or -1 when none is waiting.
  func receive(into buffer: UnsafeMutableRawBufferPointer) -> Int {
    recv(descriptor, buffer.baseAddress, buffer.count, 0)
  }

  func send(_ packet: [UInt8], toPort port: UInt16) {
    var address = Self.loopback(port: port)
    _ = packet.withUnsafeBytes { bytes in
      withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          sendto(
            descriptor, bytes.baseAddress, bytes.count, 0, $0,
            socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
    }
  }
}

/// CPU time of the calling thread, seconds (`CLOCK_THREAD_CPUTIME_ID`, as the SDK times its
/// codec calls).
func threadCPUSeconds() -> Double { clockSeconds(CLOCK_THREAD_CPUTIME_ID) }

/// libvpx's VP8 decoder called directly: the picture stays in libvpx's buffer (no copy out).
final class RawVP8Decoder {
  private let context = UnsafeMutablePointer<vpx_codec_ctx_t>.allocate(capacity: 1)

  init() throws {
    context.initialize(to: vpx_codec_ctx_t())
    var configuration = vpx_codec_dec_cfg_t(threads: 1, w: 0, h: 0)
    guard wcs_vpx_codec_dec_init(context, vpx_codec_vp8_dx(), &configuration, 0) == VPX_CODEC_OK
    else { throw PipelineBenchError.peer("vpx_codec_dec_init") }
  }

  deinit {
    vpx_codec_destroy(context)
    context.deallocate()
  }

  /// Decodes one frame; returns the shown picture's width (0 if none or on error).
  func decode(_ frame: [UInt8]) -> Int {
    let result = frame.withUnsafeBufferPointer {
      vpx_codec_decode(context, $0.baseAddress, UInt32($0.count), nil, 0)
    }
    guard result == VPX_CODEC_OK else { return 0 }
    var iterator: vpx_codec_iter_t? = nil
    var width = 0
    while let image = vpx_codec_get_frame(context, &iterator) { width = Int(image.pointee.d_w) }
    return width
  }
}

/// libopus's decoder called directly, into one reused buffer of 20 ms of mono 48 kHz.
final class RawOpusDecoder {
  private let decoder: OpaquePointer
  private var pcm = [Int16](repeating: 0, count: 960)

  init() throws {
    var error: Int32 = 0
    guard let made = opus_decoder_create(48_000, 1, &error) else {
      throw PipelineBenchError.peer("opus_decoder_create: \(error)")
    }
    decoder = made
  }

  deinit { opus_decoder_destroy(decoder) }

  /// Decodes one packet; returns the samples decoded (0 on error).
  func decode(_ packet: UnsafeRawBufferPointer) -> Int {
    let count = pcm.withUnsafeMutableBufferPointer { output -> Int32 in
      guard let samples = output.baseAddress else { return 0 }
      return opus_decode(
        decoder, packet.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(packet.count),
        samples, 960, 0)
    }
    return Int(max(0, count))
  }
}
