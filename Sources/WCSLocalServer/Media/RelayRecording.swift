import Foundation
import WCSProtocols
import WCSRecording

/// Records one publisher into WebM (VP8 + Opus, wcs-protocol.md §6): VP8 RTP packets are put
/// back into frames (RFC 7741) and Opus packets are written as they come (RFC 7587).
///
/// The file is written under a temporary name in the records directory and renamed to the
/// record name the signalling core chose when the stream ends (`finish(directory:name:)`). With
/// video, the WebM file is created at the first key frame (its header carries the picture
/// size); audio that arrives before is held, up to `maxHeldAudioPackets`.
final class RelayRecording {
  /// Audio packets held while waiting for the first key frame (5 s of 20 ms Opus).
  static let maxHeldAudioPackets = 250
  /// Packets a missing one may lag behind before the frame counts as lost: a file has no
  /// playout deadline, so this covers the relay's NACK repair (given up after 1 s; 512 packets
  /// are about 3 s of 1.5 Mbit/s video) rather than a player's few hundred milliseconds.
  static let reorderWindow = 512

  let temporaryPath: String
  private let hasVideo: Bool
  private let hasAudio: Bool
  private var recorder: WebMRecorder?
  private var assembler = VP8FrameAssembler(reorderWindow: RelayRecording.reorderWindow)
  private var heldAudio: [(packet: [UInt8], timestamp: UInt32)] = []
  private(set) var lastError: String?
  private var failed = false

  /// Records into `temporaryPath`; `hasVideo`/`hasAudio` say which tracks the file gets.
  init(temporaryPath: String, hasVideo: Bool, hasAudio: Bool) {
    self.temporaryPath = temporaryPath
    self.hasVideo = hasVideo
    self.hasAudio = hasAudio
  }

  /// One VP8 RTP packet's fields (payload = RTP payload, VP8 payload descriptor first).
  /// Returns true when the file needs a key frame (a frame was lost for good, or none came
  /// yet): the relay asks the publisher, or the file would skip to the next one by chance.
  @discardableResult
  func addVideo(sequenceNumber: UInt16, timestamp: UInt32, marker: Bool, payload: [UInt8])
    -> Bool
  {
    guard hasVideo, !failed else { return false }
    let output = assembler.insert(
      VP8FrameAssembler.Packet(
        sequenceNumber: sequenceNumber, timestamp: timestamp, marker: marker, payload: payload))
    for assembled in output.frames {
      let frame = assembled.frame
      if recorder == nil {
        guard frame.isKeyFrame, let size = Self.keyFrameSize(frame.data) else { continue }
        open(video: size)
      }
      guard let recorder else { return output.needsKeyFrame }
      do {
        try recorder.writeVideo(
          frame.data, isKeyFrame: frame.isKeyFrame, rtpTimestamp: frame.timestamp)
      } catch {
        lastError = "\(error)"
      }
    }
    return output.needsKeyFrame
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

  private func open(video: (width: Int, height: Int)?) {
    do {
      recorder = try WebMRecorder(
        path: temporaryPath, video: video, audio: hasAudio ? (48_000, 2) : nil)
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
