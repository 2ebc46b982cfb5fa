import CFFmpeg
import Foundation
import Synchronization

/// The stop flag and deadline an `RTMPOutput`'s interrupt callback reads: the callback runs on
/// the writing thread, `stop()` comes from any other.
public final class OutputInterrupt: Sendable {
  private let stopped = Atomic<Bool>(false)
  /// Monotonic nanoseconds (`DispatchTime.uptimeNanoseconds`) past which I/O is abandoned.
  private let deadline = Atomic<UInt64>(UInt64.max)

  /// A guard that is not stopped and has no deadline.
  public init() {}

  /// Ends every wait of the output at once, for good.
  public func stop() { stopped.store(true, ordering: .relaxed) }

  /// True once `stop()` was called.
  public var isStopped: Bool { stopped.load(ordering: .relaxed) }

  /// Bounds the next blocking calls to `timeout` from now.
  public func arm(_ timeout: Duration) {
    let (seconds, attoseconds) = timeout.components
    let nanoseconds = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    deadline.store(DispatchTime.now().uptimeNanoseconds + nanoseconds, ordering: .relaxed)
  }

  /// True when a blocking call should give up: stopped, or past the deadline.
  public var shouldInterrupt: Bool {
    isStopped || DispatchTime.now().uptimeNanoseconds > deadline.load(ordering: .relaxed)
  }

  /// The libavformat callback reading this object (which must outlive the I/O).
  var callback: AVIOInterruptCB {
    AVIOInterruptCB(
      callback: { opaque in
        guard let opaque else { return 0 }
        return Unmanaged<OutputInterrupt>.fromOpaque(opaque).takeUnretainedValue()
          .shouldInterrupt ? 1 : 0
      }, opaque: Unmanaged.passUnretained(self).toOpaque())
  }
}

/// A live FLV stream published to an RTMP server (`rtmp://host[:port]/app/stream`) with
/// libavformat's rtmp protocol and flv muxer: H.264 as AVC (ISO/IEC 14496-15: an `avcC`
/// sequence header from the SPS/PPS, then length-prefixed NAL units, no Annex B start codes)
/// and AAC (`OpusToAACTranscoder`'s packets).
///
/// `init` connects (TCP, RTMP handshake, `connect`, `publish`); the header (FLV metadata and
/// the codecs' sequence headers) goes out with `start`, once the first key frame gives the
/// video's configuration. Every blocking call is bounded by the `OutputInterrupt` armed with
/// `connectTimeout` or `writeTimeout`; a server that stops reading fails the write with a
/// timeout rather than blocking the caller. Times are on the caller's timeline (video 90 kHz,
/// audio 48 kHz ticks); they must not go backwards per track. FLV times are milliseconds.
///
/// Not thread-safe: one output is driven from one thread (`interrupt.stop()` from any).
public final class RTMPOutput {
  /// Bounds on the blocking calls.
  public struct Timeouts: Sendable, Equatable {
    /// TCP connect, handshake and `publish`.
    public var connect: Duration = .seconds(5)
    /// One packet written (the server reading too slowly counts as a broken connection).
    public var write: Duration = .seconds(3)

    /// The default bounds.
    public init() {}
  }

  /// The URL published to.
  public let url: String
  private let interrupt: OutputInterrupt
  private let timeouts: Timeouts
  private let muxer: FFmpegMuxer
  private var videoStream: FFmpegMuxer.Stream?
  private var audioStream: FFmpegMuxer.Stream?
  private var configuration: Set<[UInt8]> = []
  private var started = false
  private var lastVideoTicks: Int64?
  private var lastAudioTicks: Int64?

  /// Connects to `url` and starts publishing on it.
  ///
  /// - Throws: `FFmpegError` when the connection, the handshake or `publish` fail or time out
  ///   (`interrupt.shouldInterrupt` then tells a timeout or stop from a refusal).
  public init(url: String, interrupt: OutputInterrupt, timeouts: Timeouts = Timeouts())
    throws(FFmpegError)
  {
    self.url = url
    self.interrupt = interrupt
    self.timeouts = timeouts
    muxer = try FFmpegMuxer(format: "flv", path: url)
    interrupt.arm(timeouts.connect)
    do {
      try muxer.open(url: url, options: [:], interrupt: interrupt.callback)
    } catch {
      muxer.release()
      throw error
    }
  }

  deinit { close() }

  /// Adds the tracks and writes the header: `video` (the SPS/PPS of the first key frame) and
  /// `audio` (an AAC AudioSpecificConfig with its rate, channels and frame size), either may
  /// be nil but not both.
  ///
  /// - Throws: `FFmpegError` when the streams cannot be created or the header not sent.
  public func start(
    video: MP4Recorder.Video?,
    audio: (audioSpecificConfig: [UInt8], sampleRate: Int, channels: Int, frameSize: Int)?
  ) throws(FFmpegError) {
    guard !started else { return }
    if let video {
      guard
        let record = AVCDecoderConfiguration.record(
          sequenceParameterSets: video.sequenceParameterSets,
          pictureParameterSets: video.pictureParameterSets)
      else { throw FFmpegError(operation: "avcC", code: wcs_averror_invaliddata()) }
      configuration = Set(video.sequenceParameterSets + video.pictureParameterSets)
      videoStream = try muxer.addVideoStream(
        codec: AV_CODEC_ID_H264, width: video.width, height: video.height, extradata: record)
    }
    if let audio {
      audioStream = try muxer.addAACStream(
        sampleRate: audio.sampleRate, channels: audio.channels, frameSize: audio.frameSize,
        audioSpecificConfig: audio.audioSpecificConfig)
    }
    interrupt.arm(timeouts.write)
    // A live stream has no duration or size to seek back and fill in.
    try muxer.writeHeader(options: ["flvflags": "no_duration_filesize"])
    videoStream = videoStream.map(muxer.timeBase(of:))
    audioStream = audioStream.map(muxer.timeBase(of:))
    started = true
  }

  /// True once `start` wrote the header.
  public var isStarted: Bool { started }

  /// Writes one access unit (its NAL units, header byte first, no start codes) at `ticks`
  /// (90 kHz). Returns false when it was not written: before `start`, without a video track,
  /// or at a time earlier than the previous one.
  ///
  /// - Throws: `FFmpegError` when the write fails (a broken connection, a timeout).
  @discardableResult
  public func writeVideo<Unit: Collection<UInt8>>(
    nalUnits: [Unit], isKeyFrame: Bool, ticks: Int64, durationTicks: Int64
  ) throws(FFmpegError) -> Bool {
    guard started, let videoStream, ticks > (lastVideoTicks ?? -1) else { return false }
    let sample = AVCDecoderConfiguration.sample(nalUnits, leavingOut: configuration)
    guard !sample.isEmpty else { return false }
    lastVideoTicks = ticks
    interrupt.arm(timeouts.write)
    try muxer.write(
      WebMTrack.Packet(
        bytes: sample, ticks: ticks, durationTicks: durationTicks, isKeyFrame: isKeyFrame),
      clockRate: 90_000, stream: videoStream)
    return true
  }

  /// Writes one AAC packet at its `ticks` (48 kHz). Returns false when it was not written:
  /// before `start`, without an audio track, or at a time earlier than the previous one.
  ///
  /// - Throws: `FFmpegError` when the write fails.
  @discardableResult
  public func writeAudio(_ packet: OpusToAACTranscoder.Packet) throws(FFmpegError) -> Bool {
    guard started, let audioStream, packet.ticks >= 0, packet.ticks > (lastAudioTicks ?? -1)
    else { return false }
    lastAudioTicks = packet.ticks
    interrupt.arm(timeouts.write)
    try muxer.write(
      WebMTrack.Packet(
        bytes: packet.bytes, ticks: packet.ticks, durationTicks: packet.durationTicks,
        isKeyFrame: true),
      clockRate: Int32(OpusToAACTranscoder.sampleRate), stream: audioStream)
    return true
  }

  /// Ends the stream: the trailer when the header went out (bounded by the write timeout), then
  /// the connection. Later calls do nothing.
  public func close() {
    guard muxer.isOpen else { return }
    if started {
      interrupt.arm(timeouts.write)
      try? muxer.writeTrailer()
    }
    muxer.release()
  }
}
