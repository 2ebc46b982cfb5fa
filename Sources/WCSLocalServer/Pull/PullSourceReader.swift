import CFFmpeg
import Foundation
import Synchronization
import WCSCodecs
import WCSProtocols
import WCSRecording

/// Bounds on what a pulled source may cost (wcs-protocol.md: a WCS pulls RTSP/RTMP on demand).
struct PullLimits: Sendable {
  /// From the start of the connection to the first demuxed stream information.
  var openTimeout: Duration = .seconds(5)
  /// Longest wait for the next packet once playing; past it the source counts as stopped.
  var readTimeout: Duration = .seconds(5)
  /// Bytes libavformat may read to find the streams (`probesize`).
  var probeBytes = 1 << 20
  /// Media time libavformat may read to find the streams (`analyzeduration`).
  var analyzeDuration: Duration = .seconds(2)
  /// Streams a source may declare (`max_streams`).
  var maxStreams = 8
}

/// What a reader reports, on its own thread.
enum PullSourceEvent: Sendable {
  /// The source is open: its video is H.264 with these parameters; its audio, if any, is
  /// served as Opus (`PulledAudio`).
  case opened(H264FormatParameters, audio: PulledAudioFormat?)
  /// The source has audio that cannot be served (no decoder, out of bounds): video only.
  case audioSkipped(PullError)
  /// The RTP timestamps of the source's SSRCs for its media time now (the first packet, and
  /// again after the source's clock jumped): what the players' sender reports say, so that
  /// they play audio and video as aligned as the source's pts (RFC 3550 §6.4.1).
  case clock([PulledRTPClock])
  /// The RTP packets of one access unit (plain RTP, our SSRC and numbering), in order.
  case packets([[UInt8]])
  /// A frame was dropped (`PullError.badFrame`); the stream goes on.
  case dropped(PullError)
  /// The source failed or ended; no event follows.
  case failed(PullError)
}

/// One SSRC's RTP timestamp at the instant a `.clock` event is handled, and its clock rate.
struct PulledRTPClock: Equatable, Sendable {
  var ssrc: UInt32
  var timestamp: UInt32
  var clockRate: Int
}

/// The stop flag and the current deadline that libavformat's interrupt callback reads: the
/// callback runs on the reader's thread while `stop()` is called from the engine's.
private final class PullInterrupt: Sendable {
  let stopped = Atomic<Bool>(false)
  /// Monotonic nanoseconds (`DispatchTime.uptimeNanoseconds`) past which I/O is abandoned.
  let deadline = Atomic<UInt64>(UInt64.max)

  func arm(_ timeout: Duration) {
    let (seconds, attoseconds) = timeout.components
    let nanoseconds = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    deadline.store(DispatchTime.now().uptimeNanoseconds + nanoseconds, ordering: .relaxed)
  }

  var shouldInterrupt: Bool {
    stopped.load(ordering: .relaxed)
      || DispatchTime.now().uptimeNanoseconds > deadline.load(ordering: .relaxed)
  }
}

/// Reads one `rtsp://` or `rtmp://` source with libavformat on a thread of its own (opening and
/// reading block; the media loop never waits for them) and turns its H.264 video into RTP
/// packets (RFC 6184, packetization-mode 1, payload type `payloadType`) without decoding; its
/// audio, when libavcodec decodes it, into Opus RTP packets (RFC 7587, `audioPayloadType`,
/// `audioSSRC`). Both streams' RTP timestamps are the packets' pts rescaled (90 kHz, 48 kHz)
/// plus a random offset each, so they keep the source's A/V alignment.
///
/// Every wait is bounded by `PullLimits` through libavformat's interrupt callback, which also
/// ends the wait at once when `stop()` is called. After `stop()` no event is reported.
final class PullSourceReader: Sendable {
  let url: String
  let limits: PullLimits
  let payloadType: UInt8
  let ssrc: UInt32
  let audioPayloadType: UInt8
  let audioSSRC: UInt32
  private let interrupt = PullInterrupt()

  init(
    url: String, limits: PullLimits, payloadType: UInt8, ssrc: UInt32, audioPayloadType: UInt8,
    audioSSRC: UInt32
  ) {
    self.url = url
    self.limits = limits
    self.payloadType = payloadType
    self.ssrc = ssrc
    self.audioPayloadType = audioPayloadType
    self.audioSSRC = audioSSRC
  }

  /// Starts the thread; `onEvent` is called on it.
  func start(onEvent: @escaping @Sendable (PullSourceEvent) -> Void) {
    let thread = Thread { [self] in
      let result = run(onEvent)
      if !interrupt.stopped.load(ordering: .relaxed), case .failure(let error) = result {
        onEvent(.failed(error))
      }
    }
    thread.name = "wcs-pull"
    thread.start()
  }

  /// Ends the pull: pending I/O is interrupted, the thread closes the source and exits.
  func stop() { interrupt.stopped.store(true, ordering: .relaxed) }

  private var stopped: Bool { interrupt.stopped.load(ordering: .relaxed) }

  private func run(_ onEvent: @Sendable (PullSourceEvent) -> Void) -> Result<Void, PullError> {
    guard var context = avformat_alloc_context() else {
      return .failure(.cannotConnect("avformat_alloc_context"))
    }
    context.pointee.interrupt_callback = AVIOInterruptCB(
      callback: { opaque in
        guard let opaque else { return 0 }
        return Unmanaged<PullInterrupt>.fromOpaque(opaque).takeUnretainedValue().shouldInterrupt
          ? 1 : 0
      }, opaque: Unmanaged.passUnretained(interrupt).toOpaque())
    var options: OpaquePointer?
    defer { av_dict_free(&options) }
    av_dict_set(&options, "probesize", String(limits.probeBytes), 0)
    av_dict_set(
      &options, "analyzeduration", String(limits.analyzeDuration.components.seconds * 1_000_000),
      0)
    av_dict_set(&options, "max_streams", String(limits.maxStreams), 0)
    // RTSP interleaved over the TCP connection: no UDP ports to open per pull, no loss.
    if url.lowercased().hasPrefix("rtsp") { av_dict_set(&options, "rtsp_transport", "tcp", 0) }
    interrupt.arm(limits.openTimeout)
    var opened: UnsafeMutablePointer<AVFormatContext>? = context
    let openCode = avformat_open_input(&opened, url, nil, &options)
    guard openCode >= 0, let input = opened else {
      // avformat_open_input frees the context on failure.
      return .failure(Self.openError(openCode, timedOut: interrupt.shouldInterrupt))
    }
    context = input
    defer {
      var closing: UnsafeMutablePointer<AVFormatContext>? = context
      avformat_close_input(&closing)
    }
    let infoCode = avformat_find_stream_info(context, nil)
    guard infoCode >= 0 else {
      return .failure(Self.openError(infoCode, timedOut: interrupt.shouldInterrupt))
    }
    let index = av_find_best_stream(context, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
    guard index >= 0, index < context.pointee.nb_streams,
      let stream = context.pointee.streams[Int(index)],
      let parameters = stream.pointee.codecpar
    else { return .failure(.wrongFormat("no video stream")) }
    guard parameters.pointee.codec_id == AV_CODEC_ID_H264 else {
      return .failure(.wrongFormat("video is not H.264"))
    }
    let extradataSize = Int(max(0, parameters.pointee.extradata_size))
    guard extradataSize <= 64 * 1024 else { return .failure(.wrongFormat("extradata size")) }
    var extradata: [UInt8] = []
    if let bytes = parameters.pointee.extradata, extradataSize > 0 {
      extradata = Array(UnsafeBufferPointer(start: bytes, count: extradataSize))
    }
    var h264: PulledH264
    do {
      h264 = try PulledH264(extradata: extradata)
    } catch {
      return .failure(error)
    }
    let audio = openAudio(context, videoIndex: index, onEvent)
    guard !stopped else { return .success(()) }
    onEvent(.opened(h264.formatParameters, audio: audio?.decoder.format))
    return readPackets(
      context, streamIndex: index, timeBase: stream.pointee.time_base, h264: &h264, audio: audio,
      onEvent)
  }

  /// The decoder of the source's audio stream; nil without one or when it cannot be served
  /// (reported as `.audioSkipped`).
  private func openAudio(
    _ context: UnsafeMutablePointer<AVFormatContext>, videoIndex: Int32,
    _ onEvent: @Sendable (PullSourceEvent) -> Void
  ) -> (index: Int32, decoder: PulledAudio)? {
    let index = av_find_best_stream(context, AVMEDIA_TYPE_AUDIO, -1, videoIndex, nil, 0)
    guard index >= 0, index < context.pointee.nb_streams,
      let stream = context.pointee.streams[Int(index)],
      let parameters = stream.pointee.codecpar
    else { return nil }
    do {
      return (index, try PulledAudio(parameters: parameters, timeBase: stream.pointee.time_base))
    } catch {
      onEvent(.audioSkipped(error))
      return nil
    }
  }

  private func readPackets(
    _ context: UnsafeMutablePointer<AVFormatContext>, streamIndex: Int32, timeBase: AVRational,
    h264: inout PulledH264, audio: (index: Int32, decoder: PulledAudio)?,
    _ onEvent: @Sendable (PullSourceEvent) -> Void
  ) -> Result<Void, PullError> {
    guard let packet = av_packet_alloc() else { return .failure(.ended("av_packet_alloc")) }
    defer {
      var freeing: UnsafeMutablePointer<AVPacket>? = packet
      av_packet_free(&freeing)
    }
    var packetizer = H264Packetizer()
    var sequenceNumber = UInt16.random(in: 0...UInt16.max)
    let timestampOffset = UInt32.random(in: 0...UInt32.max)
    var audioSequenceNumber = UInt16.random(in: 0...UInt16.max)
    let audioTimestampOffset = UInt32.random(in: 0...UInt32.max)
    var timeline = PulledTimeline()
    let noTimestamp = wcs_av_nopts_value()
    while !stopped {
      interrupt.arm(limits.readTimeout)
      let code = av_read_frame(context, packet)
      guard code >= 0 else {
        if stopped { return .success(()) }
        if code == wcs_averror_eof() { return .failure(.ended("end of stream")) }
        return .failure(.ended(FFmpegError(operation: "av_read_frame", code: code).description))
      }
      defer { av_packet_unref(packet) }
      let streamTimeBase =
        packet.pointee.stream_index == streamIndex
        ? timeBase
        : packet.pointee.stream_index == audio?.index ? audio?.decoder.timeBase : nil
      if let streamTimeBase,
        let sourceTime = Self.microseconds(packet.pointee, timeBase: streamTimeBase),
        timeline.observe(sourceTime, at: DispatchTime.now().uptimeNanoseconds / 1000), !stopped
      {
        onEvent(
          .clock([
            PulledRTPClock(
              ssrc: ssrc, timestamp: Self.rtpTime(sourceTime, 90_000) &+ timestampOffset,
              clockRate: 90_000),
            PulledRTPClock(
              ssrc: audioSSRC, timestamp: Self.rtpTime(sourceTime, 48_000) &+ audioTimestampOffset,
              clockRate: 48_000),
          ]))
      }
      if let audio, packet.pointee.stream_index == audio.index {
        do {
          var packets: [[UInt8]] = []
          for (time, payload) in try audio.decoder.decode(packet) {
            let header = RTPHeader(
              marker: false, payloadType: audioPayloadType, sequenceNumber: audioSequenceNumber,
              timestamp: UInt32(truncatingIfNeeded: time) &+ audioTimestampOffset,
              ssrc: audioSSRC)
            audioSequenceNumber &+= 1
            if let bytes = try? RTPPacket(header: header, payload: payload).serialized() {
              packets.append(bytes)
            }
          }
          if !packets.isEmpty, !stopped { onEvent(.packets(packets)) }
        } catch {
          onEvent(.dropped(error))
        }
        continue
      }
      guard packet.pointee.stream_index == streamIndex, let data = packet.pointee.data else {
        continue
      }
      let time = packet.pointee.pts != noTimestamp ? packet.pointee.pts : packet.pointee.dts
      let taken: (picture: EncodedVideoFrame?, dropped: PullError?)
      do {
        taken = try h264.take(
          UnsafeRawBufferPointer(start: data, count: Int(max(0, packet.pointee.size))),
          timestamp: time == noTimestamp
            ? nil
            : UInt32(
              truncatingIfNeeded: av_rescale_q(time, timeBase, AVRational(num: 1, den: 90_000)))
              &+ timestampOffset,
          isKeyFrame: packet.pointee.flags & AV_PKT_FLAG_KEY != 0)
      } catch {
        // An SPS over the picture limit would make every player allocate for it: the pull
        // stops (its players fail with the reason); a bad frame alone is dropped.
        return .failure(error)
      }
      if let picture = taken.picture { send(picture, &packetizer, &sequenceNumber, onEvent) }
      if let dropped = taken.dropped { onEvent(.dropped(dropped)) }
    }
    return .success(())
  }

  /// A packet's presentation time (its decoding time without one) in microseconds.
  static func microseconds(_ packet: AVPacket, timeBase: AVRational) -> Int64? {
    let noTimestamp = wcs_av_nopts_value()
    let time = packet.pts != noTimestamp ? packet.pts : packet.dts
    guard time != noTimestamp else { return nil }
    return av_rescale_q(time, timeBase, AVRational(num: 1, den: 1_000_000))
  }

  /// A time in microseconds as ticks of an RTP clock of `rate` Hz, modulo 2³².
  static func rtpTime(_ microseconds: Int64, _ rate: Int32) -> UInt32 {
    UInt32(
      truncatingIfNeeded: av_rescale_q(
        microseconds, AVRational(num: 1, den: 1_000_000), AVRational(num: 1, den: rate)))
  }

  /// Packetizes one access unit and reports its RTP packets.
  private func send(
    _ frame: EncodedVideoFrame, _ packetizer: inout H264Packetizer, _ sequenceNumber: inout UInt16,
    _ onEvent: @Sendable (PullSourceEvent) -> Void
  ) {
    var packets: [[UInt8]] = []
    for payload in packetizer.packetize(frame) {
      let header = RTPHeader(
        marker: payload.marker, payloadType: payloadType, sequenceNumber: sequenceNumber,
        timestamp: payload.timestamp, ssrc: ssrc)
      sequenceNumber &+= 1
      if let bytes = try? RTPPacket(header: header, payload: payload.payload).serialized() {
        packets.append(bytes)
      }
    }
    if !packets.isEmpty, !stopped { onEvent(.packets(packets)) }
  }

  /// `AVERROR_STREAM_NOT_FOUND` / `AVERROR_HTTP_NOT_FOUND` (`FFERRTAG`, macros Swift cannot
  /// import) mean "no such stream"; anything else, including a timeout, "cannot connect".
  static func openError(_ code: Int32, timedOut: Bool) -> PullError {
    func tag(_ a: UInt8, _ b: Character, _ c: Character, _ d: Character) -> Int32 {
      let value =
        UInt32(a) | UInt32(b.asciiValue ?? 0) << 8 | UInt32(c.asciiValue ?? 0) << 16
        | UInt32(d.asciiValue ?? 0) << 24
      return -Int32(bitPattern: value)
    }
    if timedOut { return .cannotConnect("timed out") }
    if code == tag(0xF8, "S", "T", "R") || code == tag(0xF8, "4", "0", "4") {
      return .notFound(FFmpegError(operation: "avformat_open_input", code: code).description)
    }
    return .cannotConnect(FFmpegError(operation: "avformat_open_input", code: code).description)
  }
}
