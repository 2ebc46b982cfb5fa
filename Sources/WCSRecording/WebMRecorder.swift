import CFFmpeg
import COpus

/// Writes already-encoded VP8 video and Opus audio, as received over RTP, into a WebM file with
/// libavformat's Matroska/WebM muxer — no decoding, no transcoding.
///
/// Each track's first written packet is at time 0 in the file (RTP timestamps are rebased and
/// unwrapped past 2^32, RFC 3550 §5.1); tracks are not aligned with each other, which would need
/// RTCP sender reports. Video starts at its first key frame: frames before it cannot be decoded
/// and are dropped (counted in `statistics`). Packets whose timestamp goes backwards are dropped.
/// Interleaving of the two tracks is left to `av_interleaved_write_frame`.
///
/// Not thread-safe: use one recorder from one thread (or behind the caller's lock).
public final class WebMRecorder {
  /// Counts of what the recorder wrote and dropped.
  public struct Statistics: Equatable, Sendable {
    /// VP8 frames written to the file.
    public var videoFramesWritten = 0
    /// VP8 frames dropped because no key frame had been seen yet.
    public var videoFramesDroppedBeforeKeyFrame = 0
    /// VP8 frames dropped because their timestamp was earlier than the previous frame's.
    public var videoFramesDroppedOutOfOrder = 0
    /// Opus packets written to the file.
    public var audioPacketsWritten = 0
    /// Opus packets dropped because their timestamp was earlier than the previous packet's.
    public var audioPacketsDroppedOutOfOrder = 0
    /// Empty frames or packets, which were ignored.
    public var emptyPayloadsIgnored = 0
  }

  /// The file being written.
  public let path: String
  /// What was written and dropped so far.
  public private(set) var statistics = Statistics()

  private var context: UnsafeMutablePointer<AVFormatContext>?
  private var video: WebMTrack?
  private var videoStream: (index: Int32, timeBase: AVRational)?
  private var audio: WebMTrack?
  private var audioStream: (index: Int32, timeBase: AVRational)?
  private var seenKeyFrame = false

  /// Creates `path` (replacing it) and writes the WebM header.
  ///
  /// - Parameters:
  ///   - path: the file to create (replaced when it exists).
  ///   - video: VP8 frame size in pixels, or nil for no video track.
  ///   - audio: Opus sample rate (must be 48 000 Hz, RFC 7587 §4) and channel count (1 or 2), or
  ///     nil for no audio track.
  /// - Throws: `WebMRecorderError.noTracks`, `.invalidVideoSize`, `.unsupportedAudio`, or
  ///   `.ffmpeg` when libavformat cannot create the file or write the header.
  public init(
    path: String, video: (width: Int, height: Int)?, audio: (sampleRate: Int, channels: Int)?
  ) throws(WebMRecorderError) {
    self.path = path
    if video == nil && audio == nil { throw .noTracks }
    if let video,
      video.width <= 0 || video.height <= 0 || video.width > 16384
        || video.height > 16384
    {
      throw .invalidVideoSize(width: video.width, height: video.height)
    }
    if let audio, audio.sampleRate != 48_000 || !(1...2).contains(audio.channels) {
      throw .unsupportedAudio(sampleRate: audio.sampleRate, channels: audio.channels)
    }

    var newContext: UnsafeMutablePointer<AVFormatContext>?
    let allocated = avformat_alloc_output_context2(&newContext, nil, "webm", path)
    guard allocated >= 0, let context = newContext else {
      throw .ffmpeg(FFmpegError(operation: "avformat_alloc_output_context2", code: allocated))
    }
    self.context = context
    do {
      if let video {
        let index = try Self.addVideoStream(to: context, width: video.width, height: video.height)
        self.video = WebMTrack(clockRate: 90_000, defaultDurationTicks: 3000)
        videoStream = (index, AVRational(num: 1, den: 90_000))
      }
      if let audio {
        let index = try Self.addOpusStream(to: context, channels: audio.channels)
        self.audio = WebMTrack(clockRate: 48_000, defaultDurationTicks: 960)
        audioStream = (index, AVRational(num: 1, den: 48_000))
      }
      try FFmpegError.check(
        avio_open(&context.pointee.pb, path, AVIO_FLAG_WRITE), "avio_open(\(path))")
      try FFmpegError.check(avformat_write_header(context, nil), "avformat_write_header")
    } catch {
      releaseContext()
      throw .ffmpeg(error)
    }
    // The muxer picks its own time base (1/1000 for Matroska) while writing the header.
    if let stream = videoStream {
      videoStream = (stream.index, Self.timeBase(of: context, index: stream.index))
    }
    if let stream = audioStream {
      audioStream = (stream.index, Self.timeBase(of: context, index: stream.index))
    }
  }

  deinit {
    if context != nil { try? finish() }
  }

  /// Adds one encoded VP8 frame (a whole frame, RFC 7741 depacketized).
  ///
  /// - Parameters:
  ///   - frame: the VP8 frame bytes.
  ///   - isKeyFrame: true for a key frame (VP8 payload header P bit clear, RFC 7741 §4.3).
  ///   - rtpTimestamp: 90 kHz RTP clock (RFC 7741 §4.1); may start anywhere and wrap.
  /// - Throws: `.trackNotRecorded`, `.finished`, or `.ffmpeg` when muxing fails.
  public func writeVideo(_ frame: [UInt8], isKeyFrame: Bool, rtpTimestamp: UInt32)
    throws(WebMRecorderError)
  {
    guard context != nil else { throw .finished }
    guard var track = video, let stream = videoStream else { throw .trackNotRecorded("video") }
    if frame.isEmpty {
      statistics.emptyPayloadsIgnored += 1
      return
    }
    if !seenKeyFrame {
      guard isKeyFrame else {
        statistics.videoFramesDroppedBeforeKeyFrame += 1
        return
      }
      seenKeyFrame = true
    }
    let result = track.push(frame, timestamp: rtpTimestamp, isKeyFrame: isKeyFrame)
    video = track
    switch result {
    case .droppedOutOfOrder:
      statistics.videoFramesDroppedOutOfOrder += 1
    case .accepted(let ready):
      if let ready {
        try write(ready, clockRate: track.clockRate, stream: stream)
        statistics.videoFramesWritten += 1
      }
    }
  }

  /// Adds one Opus packet (RFC 7587 payload).
  ///
  /// - Parameters:
  ///   - packet: the Opus packet bytes.
  ///   - rtpTimestamp: 48 kHz RTP clock (RFC 7587 §4.1); may start anywhere and wrap.
  /// - Throws: `.trackNotRecorded`, `.finished`, or `.ffmpeg` when muxing fails.
  public func writeAudio(_ packet: [UInt8], rtpTimestamp: UInt32) throws(WebMRecorderError) {
    guard context != nil else { throw .finished }
    guard var track = audio, let stream = audioStream else { throw .trackNotRecorded("audio") }
    if packet.isEmpty {
      statistics.emptyPayloadsIgnored += 1
      return
    }
    let samples = packet.withUnsafeBufferPointer { buffer -> Int32 in
      guard let base = buffer.baseAddress else { return -1 }
      return opus_packet_get_nb_samples(base, Int32(buffer.count), 48_000)
    }
    let result = track.push(
      packet, timestamp: rtpTimestamp, isKeyFrame: true,
      knownDurationTicks: samples > 0 ? Int64(samples) : nil)
    audio = track
    switch result {
    case .droppedOutOfOrder:
      statistics.audioPacketsDroppedOutOfOrder += 1
    case .accepted(let ready):
      if let ready {
        try write(ready, clockRate: track.clockRate, stream: stream)
        statistics.audioPacketsWritten += 1
      }
    }
  }

  /// Writes the held-back last packets, the trailer (durations, cues) and closes the file.
  /// Calling it again does nothing.
  ///
  /// - Throws: `.ffmpeg` when the last packets or the trailer cannot be written; the file is
  ///   closed either way.
  public func finish() throws(WebMRecorderError) {
    guard let context else { return }
    defer { releaseContext() }
    if var track = video, let stream = videoStream {
      if let last = track.flush() {
        try write(last, clockRate: track.clockRate, stream: stream)
        statistics.videoFramesWritten += 1
      }
      video = track
    }
    if var track = audio, let stream = audioStream {
      if let last = track.flush() {
        try write(last, clockRate: track.clockRate, stream: stream)
        statistics.audioPacketsWritten += 1
      }
      audio = track
    }
    do {
      try FFmpegError.check(av_write_trailer(context), "av_write_trailer")
    } catch {
      throw .ffmpeg(error)
    }
  }

  private func write(
    _ packet: WebMTrack.Packet, clockRate: Int32, stream: (index: Int32, timeBase: AVRational)
  ) throws(WebMRecorderError) {
    guard let context else { throw .finished }
    guard let avPacket = av_packet_alloc() else {
      throw .ffmpeg(FFmpegError(operation: "av_packet_alloc", code: wcs_averror_enomem()))
    }
    defer {
      var owned: UnsafeMutablePointer<AVPacket>? = avPacket
      av_packet_free(&owned)
    }
    do {
      try FFmpegError.check(av_new_packet(avPacket, Int32(packet.bytes.count)), "av_new_packet")
      packet.bytes.withUnsafeBytes { source in
        guard let from = source.baseAddress, let to = avPacket.pointee.data else { return }
        UnsafeMutableRawPointer(to).copyMemory(from: from, byteCount: source.count)
      }
      let clock = AVRational(num: 1, den: clockRate)
      let start = av_rescale_q(packet.ticks, clock, stream.timeBase)
      let end = av_rescale_q(packet.ticks + packet.durationTicks, clock, stream.timeBase)
      avPacket.pointee.pts = start
      avPacket.pointee.dts = start
      avPacket.pointee.duration = end - start
      avPacket.pointee.stream_index = stream.index
      if packet.isKeyFrame { avPacket.pointee.flags |= AV_PKT_FLAG_KEY }
      try FFmpegError.check(
        av_interleaved_write_frame(context, avPacket), "av_interleaved_write_frame")
    } catch {
      throw .ffmpeg(error)
    }
  }

  private func releaseContext() {
    guard let context else { return }
    if context.pointee.pb != nil { avio_closep(&context.pointee.pb) }
    avformat_free_context(context)
    self.context = nil
  }

  private static func addVideoStream(
    to context: UnsafeMutablePointer<AVFormatContext>, width: Int, height: Int
  ) throws(FFmpegError) -> Int32 {
    guard let stream = avformat_new_stream(context, nil), let parameters = stream.pointee.codecpar
    else {
      throw FFmpegError(operation: "avformat_new_stream", code: wcs_averror_enomem())
    }
    parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
    parameters.pointee.codec_id = AV_CODEC_ID_VP8
    parameters.pointee.width = Int32(width)
    parameters.pointee.height = Int32(height)
    stream.pointee.time_base = AVRational(num: 1, den: 90_000)
    return stream.pointee.index
  }

  private static func addOpusStream(
    to context: UnsafeMutablePointer<AVFormatContext>, channels: Int
  ) throws(FFmpegError) -> Int32 {
    guard let stream = avformat_new_stream(context, nil), let parameters = stream.pointee.codecpar
    else {
      throw FFmpegError(operation: "avformat_new_stream", code: wcs_averror_enomem())
    }
    parameters.pointee.codec_type = AVMEDIA_TYPE_AUDIO
    parameters.pointee.codec_id = AV_CODEC_ID_OPUS
    parameters.pointee.sample_rate = 48_000
    av_channel_layout_default(&parameters.pointee.ch_layout, Int32(channels))
    // Matroska's CodecDelay must match the pre-skip in OpusHead (RFC 7845 §4.2).
    parameters.pointee.initial_padding = Int32(OpusHead.defaultPreSkip)
    let head = OpusHead.bytes(channels: UInt8(channels), inputSampleRate: 48_000)
    guard
      let extradata = av_mallocz(head.count + Int(AV_INPUT_BUFFER_PADDING_SIZE))?
        .assumingMemoryBound(to: UInt8.self)
    else {
      throw FFmpegError(operation: "av_mallocz", code: wcs_averror_enomem())
    }
    extradata.update(from: head, count: head.count)
    parameters.pointee.extradata = extradata
    parameters.pointee.extradata_size = Int32(head.count)
    stream.pointee.time_base = AVRational(num: 1, den: 48_000)
    return stream.pointee.index
  }

  private static func timeBase(of context: UnsafeMutablePointer<AVFormatContext>, index: Int32)
    -> AVRational
  {
    guard index >= 0, index < Int32(context.pointee.nb_streams),
      let streams = context.pointee.streams, let stream = streams[Int(index)]
    else { return AVRational(num: 1, den: 1000) }
    return stream.pointee.time_base
  }
}
