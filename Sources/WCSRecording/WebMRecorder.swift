import CFFmpeg

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
  public typealias Statistics = RecordingStatistics

  /// The file being written.
  public let path: String
  /// What was written and dropped so far.
  public var statistics: Statistics { tracks.statistics }

  private let tracks: RecordingTracks

  /// Creates `path` (replacing it) and writes the WebM header.
  ///
  /// - Parameters:
  ///   - path: the file to create (replaced when it exists).
  ///   - video: VP8 frame size in pixels, or nil for no video track.
  ///   - audio: Opus sample rate (must be 48 000 Hz, RFC 7587 §4) and channel count (1 or 2), or
  ///     nil for no audio track.
  /// - Throws: `RecorderError.noTracks`, `.invalidVideoSize`, `.unsupportedAudio`, or
  ///   `.ffmpeg` when libavformat cannot create the file or write the header.
  public init(
    path: String, video: (width: Int, height: Int)?, audio: (sampleRate: Int, channels: Int)?
  ) throws(RecorderError) {
    self.path = path
    tracks = try RecordingTracks(
      format: "webm", path: path,
      video: video.map { .init(codec: AV_CODEC_ID_VP8, width: $0.width, height: $0.height) },
      audio: audio, requiresIncreasingTimestamps: false)
  }

  deinit {
    if tracks.isOpen { try? tracks.finish() }
  }

  /// Adds one encoded VP8 frame (a whole frame, RFC 7741 depacketized).
  ///
  /// - Parameters:
  ///   - frame: the VP8 frame bytes.
  ///   - isKeyFrame: true for a key frame (VP8 payload header P bit clear, RFC 7741 §4.3).
  ///   - rtpTimestamp: 90 kHz RTP clock (RFC 7741 §4.1); may start anywhere and wrap.
  /// - Throws: `.trackNotRecorded`, `.finished`, or `.ffmpeg` when muxing fails.
  public func writeVideo(_ frame: [UInt8], isKeyFrame: Bool, rtpTimestamp: UInt32)
    throws(RecorderError)
  {
    try tracks.writeVideo(frame, isKeyFrame: isKeyFrame, rtpTimestamp: rtpTimestamp)
  }

  /// Adds one Opus packet (RFC 7587 payload).
  ///
  /// - Parameters:
  ///   - packet: the Opus packet bytes.
  ///   - rtpTimestamp: 48 kHz RTP clock (RFC 7587 §4.1); may start anywhere and wrap.
  /// - Throws: `.trackNotRecorded`, `.finished`, or `.ffmpeg` when muxing fails.
  public func writeAudio(_ packet: [UInt8], rtpTimestamp: UInt32) throws(RecorderError) {
    try tracks.writeAudio(packet, rtpTimestamp: rtpTimestamp)
  }

  /// Writes the held-back last packets, the trailer (durations, cues) and closes the file.
  /// Calling it again does nothing.
  ///
  /// - Throws: `.ffmpeg` when the last packets or the trailer cannot be written; the file is
  ///   closed either way.
  public func finish() throws(RecorderError) {
    try tracks.finish()
  }
}
