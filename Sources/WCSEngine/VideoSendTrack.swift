import Dispatch
import Foundation
import Synchronization
import WCSCodecs
import WCSMediaSeam
import WCSProtocols

/// The encode side of one published video track: pictures from a source → (scale) → VP8 →
/// RFC 7741 payloads handed to `output`. Runs on its own serial queue, never on the event loop,
/// so a slow encode does not delay packets. A disabled (muted) track encodes black pictures, as
/// the iOS SDK's disabled track does.
final class VideoSendTrack: Sendable {

  /// Counters of the track.
  struct Statistics: Sendable, Equatable {
    var framesEncoded = 0
    var keyFramesEncoded = 0
    var encodeErrors = 0
    var bitrate = 0
    /// CPU seconds spent inside libvpx's encoder.
    var encodeCPUTime = 0.0
    /// CPU seconds the virtual camera spent drawing what it delivered (it stands in for a device).
    var sourceCPUTime = 0.0
    /// What makes the sent pictures: `libvpx`, `OpenH264`, or `passthrough` (a file's own
    /// H.264, `H264FilePassThrough`).
    var encoderImplementation = "libvpx"
    /// Access units of a file sent as they are (pass-through).
    var framesPassedThrough = 0
    /// IDR access units among them.
    var keyFramesPassedThrough = 0
    /// Key-frame requests during pass-through, which the file's next IDR answers.
    var keyFrameRequestsAwaitingIDR = 0
    /// Why a file source's video is decoded and encoded rather than passed through; nil for
    /// other sources and for pass-through.
    var passThroughRefusal: String?
  }

  /// What encoding works on, used on `queue` only (checked).
  private struct EncodeState {
    let encoder: VP8Encoder
    var packetizer = VP8Packetizer()
    /// H.264 in place of VP8 once the answer chose it (`useH264`).
    var h264: H264SendCodec?
    var lastTimestamp: UInt32?
    /// A file's access units are sent instead of encoded pictures.
    var passingThrough = false
    /// Pass-through skips access units up to the next IDR (after a mute, or at the start).
    var passThroughNeedsIDR = true
  }

  var queue: DispatchQueue { encoding.queue }
  let parameters: NativeEncodingParameters
  private let encoding: QueueBoundBox<EncodeState>
  private let output: @Sendable (_ payloads: [PacketizedPayload], _ isKeyFrame: Bool) -> Void
  private let preview: (any VideoRenderer)?
  private let enabledState = Mutex(true)
  private let stopped = Mutex(false)
  private let stats = Mutex(Statistics())
  /// The answered H.264 format (`useH264`), which a file source checks before passing through.
  private let negotiatedH264 = Mutex<H264FormatParameters?>(nil)

  /// Makes the encoder at the parameters' size, frame rate and start bitrate.
  init(
    parameters: NativeEncodingParameters, preview: (any VideoRenderer)?,
    output: @escaping @Sendable ([PacketizedPayload], Bool) -> Void
  ) throws(VP8Error) {
    self.parameters = parameters
    self.preview = preview
    self.output = output
    let encoder = try VP8Encoder(
      configuration: VP8Encoder.Configuration(
        width: parameters.width, height: parameters.height, frameRate: parameters.frameRate,
        bitrateKbps: parameters.startVideoBitrate / 1000, keyFrameInterval: 3000))
    encoding = QueueBoundBox(
      EncodeState(encoder: encoder),
      queue: DispatchQueue(label: "WCSMedia.VideoSendTrack", qos: .userInitiated))
    stats.withLock { $0.bitrate = parameters.startVideoBitrate }
  }

  /// Whether real pictures are sent (`false`: black pictures of the same size).
  var isEnabled: Bool {
    get { enabledState.withLock { $0 } }
    set { enabledState.withLock { $0 = newValue } }
  }

  /// A copy of the counters.
  var statistics: Statistics { stats.withLock { $0 } }

  /// Adds CPU seconds a virtual source spent making media for this track. Any thread.
  func countSourceCPUTime(_ seconds: Double) { stats.withLock { $0.sourceCPUTime += seconds } }

  /// Stops encoding and previewing: pictures still queued are dropped; returns once the queue
  /// is idle. Not on `queue`.
  func stop() {
    stopped.withLock { $0 = true }
    queue.sync {}
  }

  /// Encodes `picture` captured at `timestamp` (90 kHz). Call on `queue` (checked).
  func encode(_ picture: I420Image, timestamp: UInt32) {
    guard !stopped.withLock({ $0 }) else { return }
    // The encoder needs increasing timestamps; a source switch may restart them.
    if let last = encoding.value.lastTimestamp, Int32(bitPattern: timestamp &- last) <= 0 {
      return
    }
    encoding.value.lastTimestamp = timestamp
    preview?.render(VideoFrame(picture, timestampNs: Int64(timestamp) * 100_000 / 9))
    var source = picture
    if source.width != parameters.width || source.height != parameters.height {
      guard let scaled = source.scaled(toWidth: parameters.width, height: parameters.height)
      else {
        stats.withLock { $0.encodeErrors += 1 }
        return
      }
      source = scaled
    }
    if !isEnabled { source = I420Image.black(width: parameters.width, height: parameters.height) }
    var cpu = 0.0
    defer { stats.withLock { $0.encodeCPUTime += cpu } }
    do {
      if let h264 = encoding.value.h264 {
        let frames = try CodecCPUTime.measure(into: &cpu) { () throws(H264Error) in
          try h264.encoder.encode(source, timestamp: timestamp)
        }
        for frame in frames {
          send(frame, payloads: encoding.value.h264?.packetizer.packetize(frame) ?? [])
        }
        return
      }
      let encoder = encoding.value.encoder
      let frames = try CodecCPUTime.measure(into: &cpu) {
        try encoder.encode(source, timestamp: timestamp)
      }
      for frame in frames {
        let payloads = encoding.value.packetizer.packetize(frame)
        stats.withLock {
          $0.framesEncoded += 1
          if frame.isKeyFrame { $0.keyFramesEncoded += 1 }
        }
        output(payloads, frame.isKeyFrame)
      }
    } catch {
      stats.withLock { $0.encodeErrors += 1 }
    }
  }

  private func send(_ frame: EncodedVideoFrame, payloads: [PacketizedPayload]) {
    stats.withLock {
      $0.framesEncoded += 1
      if frame.isKeyFrame { $0.keyFramesEncoded += 1 }
    }
    output(payloads, frame.isKeyFrame)
  }

  /// Encodes with H.264 (RFC 6184 payloads in `packetizationMode`) instead of VP8 from the
  /// next picture on: the answer chose it, `profile` its profile. Callable from any thread.
  /// - Throws: `H264Error` when OpenH264 refuses the parameters.
  func useH264(
    packetizationMode: Int, format: H264FormatParameters? = nil,
    profile: H264Encoder.Profile = .constrainedBaseline
  ) throws(H264Error) {
    let configuration = H264Encoder.Configuration(
      width: parameters.width, height: parameters.height, frameRate: parameters.frameRate,
      bitrateKbps: statistics.bitrate / 1000, keyFrameInterval: 3000,
      maxNALUnitSize: packetizationMode == 0 ? 1160 : nil, profile: profile)
    // Made on the queue, which then owns it.
    let result = queue.sync { () -> Result<Void, H264Error> in
      Result { () throws(H264Error) in
        self.encoding.value.h264 = H264SendCodec(
          encoder: try H264Encoder(configuration: configuration),
          packetizer: H264Packetizer(packetizationMode: packetizationMode))
      }
    }
    try result.get()
    negotiatedH264.withLock { $0 = format }
    stats.withLock { $0.encoderImplementation = "OpenH264" }
  }

  /// The answered H.264 format once the track encodes H.264, nil with VP8. Any thread.
  var h264Format: H264FormatParameters? {
    negotiatedH264.withLock { $0 }
  }

  /// Sends a file's access units (`passThrough`) instead of encoding pictures, or goes back
  /// to encoding (`active` false; `refusal` says why a file is transcoded). Call on `queue`
  /// (checked).
  func setPassThrough(_ active: Bool, refusal: String? = nil) {
    encoding.value.passingThrough = active
    encoding.value.passThroughNeedsIDR = true
    let encodesH264 = encoding.value.h264 != nil
    stats.withLock {
      $0.encoderImplementation = active ? "passthrough" : encodesH264 ? "OpenH264" : "libvpx"
      $0.passThroughRefusal = active ? nil : refusal
    }
  }

  /// Sends one Annex B access unit of a file as it is, stamped `timestamp` (90 kHz, from the
  /// file's pts), in H.264 payloads (RFC 6184). Dropped when H.264 is not in use, when the
  /// timestamp does not increase, and while muted; after a mute the stream resumes at the
  /// next IDR. Call on `queue` (checked).
  func passThrough(_ accessUnit: [UInt8], isKeyFrame: Bool, timestamp: UInt32) {
    guard encoding.value.passingThrough, !stopped.withLock({ $0 }), encoding.value.h264 != nil
    else { return }
    if let last = encoding.value.lastTimestamp, Int32(bitPattern: timestamp &- last) <= 0 {
      return
    }
    encoding.value.lastTimestamp = timestamp
    guard isEnabled else {
      encoding.value.passThroughNeedsIDR = true
      return
    }
    guard isKeyFrame || !encoding.value.passThroughNeedsIDR else { return }
    encoding.value.passThroughNeedsIDR = false
    let frame = EncodedVideoFrame(data: accessUnit, isKeyFrame: isKeyFrame, timestamp: timestamp)
    let payloads = encoding.value.h264?.packetizer.packetize(frame) ?? []
    stats.withLock {
      $0.framesPassedThrough += 1
      if isKeyFrame { $0.keyFramesPassedThrough += 1 }
    }
    output(payloads, isKeyFrame)
  }

  /// Makes the next encoded picture a key frame (a PLI/FIR arrived). Callable from any thread.
  func requestKeyFrame() {
    queue.async {
      // A file passed through has no encoder to ask: its next IDR serves (the first access
      // unit sent is one, so a request before it waits for nothing).
      if self.encoding.value.passingThrough {
        if !self.encoding.value.passThroughNeedsIDR {
          self.stats.withLock { $0.keyFrameRequestsAwaitingIDR += 1 }
        }
        return
      }
      self.encoding.value.encoder.requestKeyFrame()
      self.encoding.value.h264?.encoder.requestKeyFrame()
    }
  }

  /// Sets the encoder bitrate (bits per second, clamped to the parameters' bounds). Callable
  /// from any thread.
  func setBitrate(_ bitsPerSecond: Int) {
    let clamped = min(
      max(bitsPerSecond, parameters.minVideoBitrate), parameters.maxVideoBitrate)
    queue.async {
      guard self.statistics.bitrate != clamped else { return }
      do {
        try self.encoding.value.encoder.setBitrate(max(1, clamped / 1000))
        try self.encoding.value.h264?.encoder.setBitrate(max(1, clamped / 1000))
        self.stats.withLock { $0.bitrate = clamped }
      } catch {
        self.stats.withLock { $0.encodeErrors += 1 }
      }
    }
  }
}

/// The H.264 encoder and packetizer of a send track (`VideoSendTrack.useH264`).
private struct H264SendCodec {
  let encoder: H264Encoder
  var packetizer: H264Packetizer
}

extension VideoFrame {
  /// A tightly packed frame holding `image`'s pixels.
  init(_ image: I420Image, timestampNs: Int64) {
    let packed = image.packed()
    self.init(
      width: packed.width, height: packed.height, dataY: Data(packed.y), dataU: Data(packed.u),
      dataV: Data(packed.v), strideY: packed.strideY, strideU: packed.strideU,
      strideV: packed.strideV, timestampNs: timestampNs)
  }
}
