import CFFmpeg

/// Writes already-encoded H.264 video and Opus audio, as received over RTP, into an MP4 file
/// (ISO BMFF) with libavformat's mp4 muxer — no decoding, no transcoding.
///
/// Video is stored as `avc1` (ISO/IEC 14496-15 §5): the decoder configuration record (`avcC`)
/// is built from the SPS and PPS given to `init`, and every access unit is written with 4-byte
/// big-endian NAL unit lengths instead of Annex B start codes or RTP framing. Access unit
/// delimiters and copies of the configuration's SPS/PPS are left out of the samples; a different
/// SPS or PPS (a new picture size) stays in band, which decoders of `avc1` accept. Pictures are
/// assumed to be in decode order with no reordering (constrained baseline, as WebRTC sends), so
/// presentation and decode times are equal.
///
/// Audio is Opus in ISO BMFF ("Encapsulation of Opus in ISO Base Media File Format", the `Opus`
/// sample entry with a `dOps` box and an edit list for the pre-skip), which libavformat's mp4
/// muxer writes and ffmpeg, Chromium and Firefox play; it is not transcoded to AAC.
///
/// Timing is as `WebMRecorder`'s: each track starts at 0 (RTP timestamps rebased and unwrapped,
/// RFC 3550 §5.1), video starts at its first key frame, packets whose timestamp does not
/// increase are dropped (ISO BMFF decode times must increase), all counted in `statistics`.
///
/// Not thread-safe: use one recorder from one thread (or behind the caller's lock).
public final class MP4Recorder {
  /// The video track's configuration: picture size and the parameter sets for `avcC`.
  public struct Video: Sendable, Equatable {
    /// Picture width in pixels (from the SPS, after cropping).
    public var width: Int
    /// Picture height in pixels (from the SPS, after cropping).
    public var height: Int
    /// Sequence parameter set NAL units (header byte first, no start code), at least one.
    public var sequenceParameterSets: [[UInt8]]
    /// Picture parameter set NAL units (header byte first, no start code), at least one.
    public var pictureParameterSets: [[UInt8]]

    /// A configuration from its parts.
    public init(
      width: Int, height: Int, sequenceParameterSets: [[UInt8]], pictureParameterSets: [[UInt8]]
    ) {
      self.width = width
      self.height = height
      self.sequenceParameterSets = sequenceParameterSets
      self.pictureParameterSets = pictureParameterSets
    }
  }

  /// Counts of what the recorder wrote and dropped (video frames are H.264 access units).
  public typealias Statistics = RecordingStatistics

  /// The file being written.
  public let path: String
  /// What was written and dropped so far.
  public var statistics: Statistics { tracks.statistics }

  private let tracks: RecordingTracks
  /// The SPSs and PPSs of `avcC`, left out of the samples.
  private let configuration: Set<[UInt8]>

  /// Creates `path` (replacing it) and writes the MP4 header.
  ///
  /// - Parameters:
  ///   - path: the file to create (replaced when it exists).
  ///   - video: picture size (1 ... 16 384 per side) and parameter sets, or nil for no video.
  ///   - audio: Opus sample rate (must be 48 000 Hz, RFC 7587 §4) and channel count (1 or 2), or
  ///     nil for no audio track.
  /// - Throws: `RecorderError.noTracks`, `.invalidVideoSize`, `.invalidParameterSets`,
  ///   `.unsupportedAudio`, or `.ffmpeg` when libavformat cannot create the file or write the
  ///   header.
  public init(path: String, video: Video?, audio: (sampleRate: Int, channels: Int)?)
    throws(RecorderError)
  {
    self.path = path
    var track: RecordingTracks.Video?
    if let video {
      guard
        let record = AVCDecoderConfiguration.record(
          sequenceParameterSets: video.sequenceParameterSets,
          pictureParameterSets: video.pictureParameterSets)
      else { throw .invalidParameterSets }
      track = .init(
        codec: AV_CODEC_ID_H264, width: video.width, height: video.height, extradata: record)
    }
    configuration = Set((video?.sequenceParameterSets ?? []) + (video?.pictureParameterSets ?? []))
    tracks = try RecordingTracks(
      format: "mp4", path: path, video: track, audio: audio, requiresIncreasingTimestamps: true)
  }

  deinit {
    if tracks.isOpen { try? tracks.finish() }
  }

  /// Adds one H.264 access unit given as its NAL units (header byte first, no start codes, as
  /// `H264AnnexB.nalUnits` or an RFC 6184 depacketizer give them).
  ///
  /// - Parameters:
  ///   - nalUnits: the access unit's NAL units in decode order.
  ///   - isKeyFrame: true when it holds an IDR slice (NAL type 5).
  ///   - rtpTimestamp: 90 kHz RTP clock (RFC 6184 §5.1); may start anywhere and wrap.
  /// - Throws: `.trackNotRecorded`, `.finished`, or `.ffmpeg` when muxing fails.
  public func writeVideo<Unit: Collection<UInt8>>(
    nalUnits: [Unit], isKeyFrame: Bool, rtpTimestamp: UInt32
  ) throws(RecorderError) {
    try tracks.writeVideo(
      lengthPrefixed(nalUnits), isKeyFrame: isKeyFrame, rtpTimestamp: rtpTimestamp)
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

  /// Writes the held-back last packets, the trailer (the `moov` index) and closes the file.
  /// Calling it again does nothing. A file not finished has no index and does not play.
  ///
  /// - Throws: `.ffmpeg` when the last packets or the trailer cannot be written; the file is
  ///   closed either way.
  public func finish() throws(RecorderError) {
    try tracks.finish()
  }

  /// The sample bytes of an access unit: each kept NAL unit after its 4-byte length.
  private func lengthPrefixed<Unit: Collection<UInt8>>(_ units: [Unit]) -> [UInt8] {
    AVCDecoderConfiguration.sample(units, leavingOut: configuration)
  }
}

/// The AVC decoder configuration record (`avcC`, ISO/IEC 14496-15 §5.3.3.1).
enum AVCDecoderConfiguration {
  /// version 1, profile / compatibility / level from the first SPS, 4-byte NAL lengths, then the
  /// SPSs and PPSs each after a 16-bit length. Nil when either list is empty, a unit is not of
  /// its type, is shorter than its fixed fields, or there are more than 31 SPSs or 255 PPSs.
  /// The high-profile extension (chroma format, bit depths) is not written: it is optional for
  /// readers, which take those fields from the SPS.
  static func record(sequenceParameterSets: [[UInt8]], pictureParameterSets: [[UInt8]])
    -> [UInt8]?
  {
    guard let first = sequenceParameterSets.first, first.count >= 4,
      sequenceParameterSets.count <= 31, !pictureParameterSets.isEmpty,
      pictureParameterSets.count <= 255,
      sequenceParameterSets.allSatisfy({ $0.first.map { $0 & 0x1F == 7 } == true }),
      pictureParameterSets.allSatisfy({ $0.count >= 2 && $0[0] & 0x1F == 8 }),
      (sequenceParameterSets + pictureParameterSets).allSatisfy({ $0.count <= 0xFFFF })
    else { return nil }
    var record: [UInt8] = [1, first[1], first[2], first[3], 0xFC | 3]
    record.append(0xE0 | UInt8(sequenceParameterSets.count))
    for unit in sequenceParameterSets {
      record += [UInt8(unit.count >> 8), UInt8(unit.count & 0xFF)] + unit
    }
    record.append(UInt8(pictureParameterSets.count))
    for unit in pictureParameterSets {
      record += [UInt8(unit.count >> 8), UInt8(unit.count & 0xFF)] + unit
    }
    return record
  }

  /// An AVC sample (ISO/IEC 14496-15 §5.3.2): each NAL unit after its 4-byte big-endian length,
  /// leaving out access unit delimiters and the parameter sets of `configuration` (already in
  /// the `avcC` record); other SPSs/PPSs stay in band.
  static func sample<Unit: Collection<UInt8>>(
    _ units: [Unit], leavingOut configuration: Set<[UInt8]>
  ) -> [UInt8] {
    var sample: [UInt8] = []
    for unit in units {
      guard let header = unit.first else { continue }
      let type = header & 0x1F
      if type == 9 { continue }
      if type == 7 || type == 8, configuration.contains(Array(unit)) { continue }
      let length = UInt32(truncatingIfNeeded: unit.count)
      sample += [
        UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF),
        UInt8(length & 0xFF),
      ]
      sample += unit
    }
    return sample
  }
}
