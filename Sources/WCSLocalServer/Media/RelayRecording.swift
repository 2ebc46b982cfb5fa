import Foundation
import WCSCodecs
import WCSProtocols
import WCSRecording

/// Records one publisher into WebM (VP8 + Opus, wcs-protocol.md §6) or, for an H.264 stream,
/// into MP4 (H.264 + Opus, `MP4Recorder`): VP8 RTP packets are put back into frames (RFC 7741),
/// H.264 packets into complete access units (RFC 6184, `H264AccessUnitAssembler`), and Opus
/// packets are written as they come (RFC 7587).
///
/// The file is written under a temporary name in the records directory and renamed to the
/// record name the signalling core chose when the stream ends (`finish(directory:name:)`). With
/// video, the file is created at the first key frame (its header carries the picture size, and
/// for H.264 the SPS/PPS, which must come with that IDR as WebRTC senders send them); audio
/// that arrives before is held, up to `maxHeldAudioPackets`.
///
/// H.264 packets must arrive in sequence order: the assembler has no reorder window, so a
/// reordered or late (retransmitted) packet costs its access unit and a key frame request.
final class RelayRecording {
  /// The container and video codec of a recording.
  enum Format: Equatable {
    /// VP8 + Opus in WebM.
    case webm
    /// H.264 + Opus in MP4.
    case mp4

    /// The file name extension of the format.
    var fileExtension: String {
      switch self {
      case .webm: return "webm"
      case .mp4: return "mp4"
      }
    }
  }

  /// The open file of either format.
  private enum Recorder {
    case webm(WebMRecorder)
    case mp4(MP4Recorder)

    func writeAudio(_ packet: [UInt8], rtpTimestamp: UInt32) throws(RecorderError) {
      switch self {
      case .webm(let recorder): try recorder.writeAudio(packet, rtpTimestamp: rtpTimestamp)
      case .mp4(let recorder): try recorder.writeAudio(packet, rtpTimestamp: rtpTimestamp)
      }
    }

    func finish() throws(RecorderError) {
      switch self {
      case .webm(let recorder): try recorder.finish()
      case .mp4(let recorder): try recorder.finish()
      }
    }
  }

  /// The video track a file is opened with.
  private enum VideoTrack {
    case vp8(width: Int, height: Int)
    case h264(MP4Recorder.Video)
  }

  /// Audio packets held while waiting for the first key frame (5 s of 20 ms Opus).
  static let maxHeldAudioPackets = 250
  /// Packets a missing one may lag behind before the frame counts as lost: a file has no
  /// playout deadline, so this covers the relay's NACK repair (given up after 1 s; 512 packets
  /// are about 3 s of 1.5 Mbit/s video) rather than a player's few hundred milliseconds.
  static let reorderWindow = 512

  let temporaryPath: String
  /// WebM or MP4.
  let format: Format
  private let hasVideo: Bool
  private let hasAudio: Bool
  private var recorder: Recorder?
  private var assembler = VP8FrameAssembler(reorderWindow: RelayRecording.reorderWindow)
  private var h264Assembler = H264AccessUnitAssembler(reorderWindow: RelayRecording.reorderWindow)
  private var heldAudio: [(packet: [UInt8], timestamp: UInt32)] = []
  private(set) var lastError: String?
  private var failed = false

  /// Records into `temporaryPath` in `format`; `hasVideo`/`hasAudio` say which tracks the
  /// file gets.
  init(temporaryPath: String, format: Format = .webm, hasVideo: Bool, hasAudio: Bool) {
    self.temporaryPath = temporaryPath
    self.format = format
    self.hasVideo = hasVideo
    self.hasAudio = hasAudio
  }

  /// One video RTP packet's fields (payload = RTP payload: VP8 payload descriptor first for
  /// WebM, an RFC 6184 payload for MP4). Returns true when the file needs a key frame (a frame
  /// was lost for good, or none usable came yet): the relay asks the publisher, or the file
  /// would skip to the next one by chance.
  @discardableResult
  func addVideo(sequenceNumber: UInt16, timestamp: UInt32, marker: Bool, payload: [UInt8])
    -> Bool
  {
    guard hasVideo, !failed else { return false }
    let packet = VP8FrameAssembler.Packet(
      sequenceNumber: sequenceNumber, timestamp: timestamp, marker: marker, payload: payload)
    switch format {
    case .webm: return addVP8(packet)
    case .mp4: return addH264(packet)
    }
  }

  private func addVP8(_ packet: VP8FrameAssembler.Packet) -> Bool {
    let output = assembler.insert(packet)
    for assembled in output.frames {
      let frame = assembled.frame
      if recorder == nil {
        guard frame.isKeyFrame, let size = Self.keyFrameSize(frame.data) else { continue }
        open(video: .vp8(width: size.width, height: size.height))
      }
      guard case .webm(let recorder) = recorder else { return output.needsKeyFrame }
      do {
        try recorder.writeVideo(
          frame.data, isKeyFrame: frame.isKeyFrame, rtpTimestamp: frame.timestamp)
      } catch {
        lastError = "\(error)"
      }
    }
    return output.needsKeyFrame
  }

  private func addH264(_ packet: H264AccessUnitAssembler.Packet) -> Bool {
    let output = h264Assembler.insert(packet)
    var needsKeyFrame = output.needsKeyFrame
    for accessUnit in output.accessUnits {
      let units = H264AnnexB.nalUnits(accessUnit.data)
      if recorder == nil {
        guard accessUnit.isKeyFrame else { continue }
        guard let video = Self.h264Video(units) else {
          // An IDR that leans on parameter sets sent earlier: the next one should carry them.
          needsKeyFrame = true
          continue
        }
        open(video: .h264(video))
      }
      guard case .mp4(let recorder) = recorder else { return needsKeyFrame }
      do {
        try recorder.writeVideo(
          nalUnits: units, isKeyFrame: accessUnit.isKeyFrame, rtpTimestamp: accessUnit.timestamp)
      } catch {
        lastError = "\(error)"
      }
    }
    return needsKeyFrame
  }

  /// One Opus packet (the RTP payload) with its 48 kHz RTP timestamp.
  func addAudio(_ packet: [UInt8], timestamp: UInt32) {
    guard hasAudio, !failed, !packet.isEmpty else { return }
    if recorder == nil {
      if hasVideo {
        heldAudio.append((packet, timestamp))
        if heldAudio.count > Self.maxHeldAudioPackets { heldAudio.removeFirst() }
        return
      }
      open(video: nil)
    }
    write(audio: packet, timestamp: timestamp)
  }

  /// Finishes the file and stores it as `name` in `directory`, or, when a file of that name
  /// exists, as the first free suffixed name (`RecordNaming.uniqueFileName`): an existing file
  /// is never replaced. Returns the name used, `nil` (leaving no file) when nothing was
  /// recorded or writing failed; `lastError` says why.
  func finish(directory: String, name: String) -> String? {
    guard let recorder else {
      lastError = lastError ?? "no media recorded"
      return nil
    }
    self.recorder = nil
    defer { try? FileManager.default.removeItem(atPath: temporaryPath) }
    do {
      try recorder.finish()
    } catch {
      lastError = "\(error)"
      return nil
    }
    // link(2) fails with EEXIST rather than replace: no window between a check and the move.
    var failure: Int32 = 0
    let stored = RecordNaming.uniqueFileName(name) { candidate in
      let path = (directory as NSString).appendingPathComponent(candidate)
      guard link(temporaryPath, path) != 0 else {
        failure = 0
        return false
      }
      failure = errno
      return failure == EEXIST
    }
    guard failure == 0 || failure == EEXIST,
      FileManager.default.fileExists(
        atPath: (directory as NSString).appendingPathComponent(stored))
    else {
      lastError = "cannot store \(name): \(String(cString: strerror(failure)))"
      return nil
    }
    return stored
  }

  /// Stops without keeping a file.
  func discard() {
    if let recorder { try? recorder.finish() }
    recorder = nil
    try? FileManager.default.removeItem(atPath: temporaryPath)
  }

  private func open(video: VideoTrack?) {
    let audio: (sampleRate: Int, channels: Int)? = hasAudio ? (48_000, 2) : nil
    do {
      switch (format, video) {
      case (.webm, .vp8(let width, let height)):
        recorder = .webm(
          try WebMRecorder(path: temporaryPath, video: (width, height), audio: audio))
      case (.mp4, .h264(let track)):
        recorder = .mp4(try MP4Recorder(path: temporaryPath, video: track, audio: audio))
      case (.webm, _):
        recorder = .webm(try WebMRecorder(path: temporaryPath, video: nil, audio: audio))
      case (.mp4, _):
        recorder = .mp4(try MP4Recorder(path: temporaryPath, video: nil, audio: audio))
      }
    } catch {
      failed = true
      lastError = "\(error)"
      return
    }
    let held = heldAudio
    heldAudio = []
    for (packet, timestamp) in held { write(audio: packet, timestamp: timestamp) }
  }

  private func write(audio packet: [UInt8], timestamp: UInt32) {
    guard let recorder else { return }
    do {
      try recorder.writeAudio(packet, rtpTimestamp: timestamp)
    } catch {
      lastError = "\(error)"
    }
  }

  /// The MP4 video track of an IDR access unit's NAL units: its SPSs (the first gives the
  /// picture size) and PPSs; nil when it carries none of either or the SPS does not parse.
  static func h264Video(_ units: [ArraySlice<UInt8>]) -> MP4Recorder.Video? {
    let parameterSets = { (type: UInt8) in
      units.filter { $0.first.map(H264NALUnitType.of) == type }.map { Array($0) }
    }
    let sps = parameterSets(H264NALUnitType.sps)
    let pps = parameterSets(H264NALUnitType.pps)
    guard let first = sps.first, !pps.isEmpty,
      let parsed = try? H264SequenceParameterSet(nalUnit: first)
    else { return nil }
    return MP4Recorder.Video(
      width: parsed.width, height: parsed.height, sequenceParameterSets: sps,
      pictureParameterSets: pps)
  }

  /// Width and height from a VP8 key frame header (RFC 6386 §9.1: 3-byte frame tag, start code
  /// 9d 01 2a, then 14-bit width and height, little endian, top 2 bits scaling).
  static func keyFrameSize(_ frame: [UInt8]) -> (width: Int, height: Int)? {
    guard frame.count >= 10, frame[3] == 0x9D, frame[4] == 0x01, frame[5] == 0x2A else {
      return nil
    }
    let width = (Int(frame[6]) | Int(frame[7]) << 8) & 0x3FFF
    let height = (Int(frame[8]) | Int(frame[9]) << 8) & 0x3FFF
    guard width > 0, height > 0 else { return nil }
    return (width, height)
  }
}
