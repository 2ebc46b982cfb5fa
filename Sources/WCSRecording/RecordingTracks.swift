import CFFmpeg

/// Counts of what a recorder wrote and dropped.
public struct RecordingStatistics: Equatable, Sendable {
  /// Video frames (VP8 frames, H.264 access units) written to the file.
  public var videoFramesWritten = 0
  /// Video frames dropped because no key frame had been seen yet.
  public var videoFramesDroppedBeforeKeyFrame = 0
  /// Video frames dropped because their timestamp was earlier than the previous frame's (or,
  /// in MP4, equal to it).
  public var videoFramesDroppedOutOfOrder = 0
  /// Opus packets written to the file.
  public var audioPacketsWritten = 0
  /// Opus packets dropped because their timestamp was earlier than the previous packet's (or,
  /// in MP4, equal to it).
  public var audioPacketsDroppedOutOfOrder = 0
  /// Empty frames or packets, which were ignored.
  public var emptyPayloadsIgnored = 0
}

/// What `WebMRecorder` and `MP4Recorder` share: the muxer, a video and an Opus track with
/// their timelines, the wait for the first key frame and the counts.
final class RecordingTracks {
  /// A video track to create: codec, picture size and decoder configuration.
  struct Video {
    var codec: AVCodecID
    var width: Int
    var height: Int
    var extradata: [UInt8] = []
  }

  private(set) var statistics = RecordingStatistics()
  private let muxer: FFmpegMuxer
  private var video: WebMTrack?
  private var videoStream: FFmpegMuxer.Stream?
  private var audio: WebMTrack?
  private var audioStream: FFmpegMuxer.Stream?
  private var seenKeyFrame = false

  /// Checks the tracks, creates `path` with libavformat's muxer `format` and writes its header.
  /// `requiresIncreasingTimestamps` drops packets that repeat the previous timestamp.
  init(
    format: String, path: String, video: Video?, audio: (sampleRate: Int, channels: Int)?,
    requiresIncreasingTimestamps: Bool
  ) throws(RecorderError) {
    if video == nil && audio == nil { throw .noTracks }
    if let video,
      video.width <= 0 || video.height <= 0 || video.width > 16384 || video.height > 16384
    {
      throw .invalidVideoSize(width: video.width, height: video.height)
    }
    if let audio, audio.sampleRate != 48_000 || !(1...2).contains(audio.channels) {
      throw .unsupportedAudio(sampleRate: audio.sampleRate, channels: audio.channels)
    }
    do {
      muxer = try FFmpegMuxer(format: format, path: path)
    } catch {
      throw .ffmpeg(error)
    }
    do {
      if let video {
        videoStream = try muxer.addVideoStream(
          codec: video.codec, width: video.width, height: video.height,
          extradata: video.extradata)
        self.video = WebMTrack(
          clockRate: 90_000, defaultDurationTicks: 3000,
          requiresIncreasingTimestamps: requiresIncreasingTimestamps)
      }
      if let audio {
        audioStream = try muxer.addOpusStream(channels: audio.channels)
        self.audio = WebMTrack(
          clockRate: 48_000, defaultDurationTicks: 960,
          requiresIncreasingTimestamps: requiresIncreasingTimestamps)
      }
      try muxer.start(path: path)
    } catch {
      muxer.release()
      throw .ffmpeg(error)
    }
    // The muxer picks its own time base (1/1000 for Matroska) while writing the header.
    videoStream = videoStream.map(muxer.timeBase(of:))
    audioStream = audioStream.map(muxer.timeBase(of:))
  }

  /// True until `finish()`.
  var isOpen: Bool { muxer.isOpen }

  /// One video frame in the container's sample format, 90 kHz RTP timestamp.
  func writeVideo(_ frame: [UInt8], isKeyFrame: Bool, rtpTimestamp: UInt32)
    throws(RecorderError)
  {
    guard muxer.isOpen else { throw .finished }
    guard video != nil else { throw .trackNotRecorded("video") }
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
    let (written, dropped) = try push(
      frame, timestamp: rtpTimestamp, isKeyFrame: isKeyFrame, duration: nil,
      track: &video, stream: videoStream)
    statistics.videoFramesWritten += written
    statistics.videoFramesDroppedOutOfOrder += dropped
  }

  /// One Opus packet, 48 kHz RTP timestamp.
  func writeAudio(_ packet: [UInt8], rtpTimestamp: UInt32) throws(RecorderError) {
    guard muxer.isOpen else { throw .finished }
    guard audio != nil else { throw .trackNotRecorded("audio") }
    if packet.isEmpty {
      statistics.emptyPayloadsIgnored += 1
      return
    }
    let (written, dropped) = try push(
      packet, timestamp: rtpTimestamp, isKeyFrame: true,
      duration: OpusHead.durationTicks(of: packet), track: &audio, stream: audioStream)
    statistics.audioPacketsWritten += written
    statistics.audioPacketsDroppedOutOfOrder += dropped
  }

  /// Writes the held-back last packets and the trailer, and closes the file (either way).
  func finish() throws(RecorderError) {
    guard muxer.isOpen else { return }
    defer { muxer.release() }
    if let last = video?.flush(), let stream = videoStream {
      try write(last, clockRate: 90_000, stream: stream)
      statistics.videoFramesWritten += 1
    }
    if let last = audio?.flush(), let stream = audioStream {
      try write(last, clockRate: 48_000, stream: stream)
      statistics.audioPacketsWritten += 1
    }
    do {
      try muxer.writeTrailer()
    } catch {
      throw .ffmpeg(error)
    }
  }

  /// Gives a packet to its track; returns how many packets were written and dropped.
  private func push(
    _ bytes: [UInt8], timestamp: UInt32, isKeyFrame: Bool, duration: Int64?,
    track: inout WebMTrack?, stream: FFmpegMuxer.Stream?
  ) throws(RecorderError) -> (written: Int, dropped: Int) {
    guard var pushed = track, let stream else { return (0, 0) }
    let result = pushed.push(
      bytes, timestamp: timestamp, isKeyFrame: isKeyFrame, knownDurationTicks: duration)
    track = pushed
    switch result {
    case .droppedOutOfOrder: return (0, 1)
    case .accepted(nil): return (0, 0)
    case .accepted(let ready?):
      try write(ready, clockRate: pushed.clockRate, stream: stream)
      return (1, 0)
    }
  }

  private func write(_ packet: WebMTrack.Packet, clockRate: Int32, stream: FFmpegMuxer.Stream)
    throws(RecorderError)
  {
    do {
      try muxer.write(packet, clockRate: clockRate, stream: stream)
    } catch {
      throw .ffmpeg(error)
    }
  }
}
