import CFFmpeg
import WCSRecording

/// Reads any file FFmpeg can demux and decode (MP4, MKV, WebM, AVI, Ogg, ...; H.264, VP8, VP9,
/// AAC, Opus, MP3, ...) and yields its best video stream as I420 pictures and its best audio
/// stream as 48 kHz Int16 PCM in 20 ms chunks, in presentation-time order.
///
/// Pull-based and unpaced: `nextSample()` decodes as fast as it is called; `MediaFilePacer`
/// releases samples in real time. Corrupt packets inside a readable file are skipped (counted in
/// `corruptPacketsSkipped`).
///
/// Not thread-safe: use one reader from one thread.
public final class MediaFileReader: MediaSampleSource {
  /// The file being read.
  public let path: String
  /// Container and stream information.
  public let info: MediaFileInfo
  /// Packets the decoders rejected as corrupt and that were skipped.
  public private(set) var corruptPacketsSkipped = 0

  private let decodeVideo: Bool
  private let decodeAudio: Bool
  private var file: OpenedMediaFile
  private let videoConverter: VideoFrameConverter
  private let audioResampler: AudioResampler
  private var chunker: AudioChunker
  private var videoQueue: [DecodedVideoFrame] = []
  private var audioQueue: [DecodedAudioChunk] = []
  private var reachedEnd = false
  private static let maxQueuedVideoFrames = 60
  private static let maxQueuedAudioChunks = 150
  private var lastVideoSeconds: Double?
  private let frameInterval: Double

  /// Opens `path` and its decoders.
  ///
  /// - Parameters:
  ///   - path: the media file (any container libavformat opens: MP4, WebM, Matroska, AVI...).
  ///   - videoSize: output picture size in pixels (scaled exactly to it), or nil for the
  ///     stream's own size.
  ///   - audioChannels: 1 (mono) or 2 (stereo) output channels.
  ///   - decodeVideo: false to ignore the video stream.
  ///   - decodeAudio: false to ignore the audio stream (both false: only probe the file, for
  ///     `info.durationSeconds` and `formatName`).
  /// - Throws: `MediaFileReaderError.openFailed` for a missing, unreadable or unrecognised file,
  ///   `.streamInfoUnavailable`, `.noMediaStreams`, `.decoderUnavailable`,
  ///   `.invalidOutputFormat`, or `.ffmpeg`.
  public init(
    path: String, videoSize: (width: Int, height: Int)? = nil, audioChannels: Int = 2,
    decodeVideo: Bool = true, decodeAudio: Bool = true
  ) throws(MediaFileReaderError) {
    if let videoSize,
      videoSize.width <= 0 || videoSize.height <= 0 || videoSize.width > 16384
        || videoSize.height > 16384
    {
      throw .invalidOutputFormat("video size \(videoSize.width)x\(videoSize.height)")
    }
    guard (1...2).contains(audioChannels) else {
      throw .invalidOutputFormat("\(audioChannels) audio channels (1 or 2)")
    }
    self.path = path
    self.decodeVideo = decodeVideo
    self.decodeAudio = decodeAudio
    file = try OpenedMediaFile(path: path, decodeVideo: decodeVideo, decodeAudio: decodeAudio)
    info = file.describe()
    let fps = info.video?.framesPerSecond ?? 0
    frameInterval = fps > 0 ? 1 / fps : 1.0 / 30
    videoConverter = VideoFrameConverter(outputSize: videoSize)
    audioResampler = AudioResampler(channels: audioChannels)
    chunker = AudioChunker(channels: audioChannels)
  }

  /// The file's length in seconds, when the container says.
  public var duration: Double? { info.durationSeconds }

  /// The next video frame or audio chunk in presentation-time order, or nil at the end of the
  /// file. Throws `.ffmpeg` when the file cannot be read further (truncated or damaged
  /// container) or a frame cannot be converted.
  public func nextSample() throws(MediaFileReaderError) -> MediaSample? {
    // Both heads are needed to pick the earlier sample; a badly interleaved file could make one
    // queue grow without bound while waiting for the other, so waiting stops at a few seconds.
    while !reachedEnd
      && ((file.videoDecoder != nil && videoQueue.isEmpty)
        || (file.audioDecoder != nil && audioQueue.isEmpty))
      && videoQueue.count < Self.maxQueuedVideoFrames
      && audioQueue.count < Self.maxQueuedAudioChunks
    {
      try readPacket()
    }
    switch (videoQueue.first, audioQueue.first) {
    case (let video?, let audio?):
      if audio.ptsSeconds <= video.ptsSeconds { return .audio(audioQueue.removeFirst()) }
      return .video(videoQueue.removeFirst())
    case (.some, nil): return .video(videoQueue.removeFirst())
    case (nil, .some): return .audio(audioQueue.removeFirst())
    case (nil, nil): return nil
    }
  }

  /// Starts over from the beginning of the file (for looping), so `nextSample()` yields the
  /// same samples again.
  ///
  /// The file is reopened rather than seeked: a seek lands on a key frame and may skip the first
  /// audio packets or codec-delay handling, while a fresh open replays the file exactly.
  /// Throws `.openFailed` (or another open error) when the file can no longer be opened.
  public func rewind() throws(MediaFileReaderError) {
    file = try OpenedMediaFile(path: path, decodeVideo: decodeVideo, decodeAudio: decodeAudio)
    audioResampler.reset()
    chunker.reset()
    videoQueue.removeAll()
    audioQueue.removeAll()
    lastVideoSeconds = nil
    reachedEnd = false
  }

  private func readPacket() throws(MediaFileReaderError) {
    let packet = file.packet
    let result = av_read_frame(file.format, packet)
    if result == wcs_averror_eof() {
      try drainAtEnd()
      return
    }
    if result < 0 { throw .ffmpeg(FFmpegError(operation: "av_read_frame", code: result)) }
    defer { av_packet_unref(packet) }
    if let decoder = file.videoDecoder, packet.pointee.stream_index == decoder.streamIndex {
      try decodeVideo(decoder, packet)
    } else if let decoder = file.audioDecoder, packet.pointee.stream_index == decoder.streamIndex {
      try decodeAudio(decoder, packet)
    }
  }

  private func drainAtEnd() throws(MediaFileReaderError) {
    if let decoder = file.videoDecoder { try decodeVideo(decoder, nil) }
    if let decoder = file.audioDecoder {
      try decodeAudio(decoder, nil)
      let tail = try audioResampler.drain()
      if !tail.isEmpty {
        audioQueue.append(contentsOf: chunker.append(tail, ptsSeconds: 0))
      }
      if let last = chunker.finish() { audioQueue.append(last) }
    }
    reachedEnd = true
  }

  private func decodeVideo(
    _ decoder: FFmpegStreamDecoder, _ packet: UnsafeMutablePointer<AVPacket>?
  )
    throws(MediaFileReaderError)
  {
    let healthy = try decoder.decode(packet) { (frame) throws(MediaFileReaderError) in
      let seconds =
        seconds(frame.pointee.best_effort_timestamp, decoder.timeBase)
        ?? (lastVideoSeconds.map { $0 + frameInterval } ?? 0)
      lastVideoSeconds = seconds
      videoQueue.append(try videoConverter.convert(frame, ptsSeconds: seconds))
    }
    if !healthy && packet != nil { corruptPacketsSkipped += 1 }
  }

  private func decodeAudio(
    _ decoder: FFmpegStreamDecoder, _ packet: UnsafeMutablePointer<AVPacket>?
  )
    throws(MediaFileReaderError)
  {
    let healthy = try decoder.decode(packet) { (frame) throws(MediaFileReaderError) in
      let samples = try audioResampler.convert(frame)
      let seconds = seconds(frame.pointee.best_effort_timestamp, decoder.timeBase) ?? 0
      audioQueue.append(contentsOf: chunker.append(samples, ptsSeconds: seconds))
    }
    if !healthy && packet != nil { corruptPacketsSkipped += 1 }
  }

  /// A timestamp in `timeBase` units as seconds from the start of the file, nil for "none".
  private func seconds(_ timestamp: Int64, _ timeBase: AVRational) -> Double? {
    guard timestamp != wcs_av_nopts_value(), timeBase.den != 0 else { return nil }
    return Double(timestamp) * wcs_av_q2d(timeBase) - file.startSeconds
  }
}
