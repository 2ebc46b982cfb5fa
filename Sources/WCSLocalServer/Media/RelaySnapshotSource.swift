import Foundation
import WCSCodecs
import WCSProtocols

/// What a publisher's snapshot needs (wcs-protocol.md §3 `snapshot`): the last VP8 key frame
/// and the frames after it, put back together from RTP (RFC 7741), decoded only when a
/// snapshot is asked for. Loop-confined, like the publisher it belongs to.
///
/// Bounded: at most `maxFrames` frames and `maxBytes` bytes are held; past either, or after a
/// frame lost for good, the held frames are dropped and the next key frame starts again.
final class RelaySnapshotSource {
  /// Frames held at most (10 s at 30 fps).
  static let maxFrames = 300
  /// Bytes held at most.
  static let maxBytes = 8 << 20
  /// Packets a missing one may lag before its frame counts as lost.
  static let reorderWindow = 256

  private var assembler = VP8FrameAssembler(reorderWindow: RelaySnapshotSource.reorderWindow)
  private(set) var frames: [[UInt8]] = []
  private var bytes = 0
  /// Snapshot requests waiting for a key frame, with when they were asked.
  var waiting: [(requestId: String, askedAt: MediaInstant)] = []

  /// Whether a decodable sequence (starting with a key frame) is held.
  var hasKeyFrame: Bool { !frames.isEmpty }

  /// One VP8 RTP packet of the publisher. Returns `true` when a key frame arrived (waiting
  /// requests can be served).
  @discardableResult
  func addVideo(sequenceNumber: UInt16, timestamp: UInt32, marker: Bool, payload: [UInt8])
    -> Bool
  {
    let output = assembler.insert(
      VP8FrameAssembler.Packet(
        sequenceNumber: sequenceNumber, timestamp: timestamp, marker: marker, payload: payload))
    if output.needsKeyFrame, !output.frames.contains(where: { $0.frame.isKeyFrame }) {
      // A gap: what follows does not decode from the held frames.
      drop()
    }
    var keyFrameArrived = false
    for assembled in output.frames {
      let data = assembled.frame.data
      if assembled.frame.isKeyFrame {
        frames = [data]
        bytes = data.count
        keyFrameArrived = true
      } else if !frames.isEmpty {
        if frames.count >= Self.maxFrames || bytes + data.count > Self.maxBytes {
          drop()
        } else {
          frames.append(data)
          bytes += data.count
        }
      }
    }
    return keyFrameArrived
  }

  private func drop() {
    frames.removeAll()
    bytes = 0
  }

  /// The latest picture of `frames` (decoded from its key frame on), as PNG. Run off the loop:
  /// decoding a long run of frames takes a while.
  /// - Throws: `VP8Error` when nothing decodes, `PictureFileError` from the PNG writer.
  static func png(of frames: [[UInt8]]) throws -> [UInt8] {
    let decoder = try VP8Decoder()
    var latest: I420Image?
    for frame in frames {
      // A frame that does not decode ends the usable run; the picture before it stands.
      let picture: I420Image?
      do { picture = try decoder.decode(frame) } catch { break }
      if let picture { latest = picture }
    }
    guard let latest else { throw SnapshotError.nothingDecoded }
    return try PictureFile.png(latest)
  }

  enum SnapshotError: Error, CustomStringConvertible {
    case nothingDecoded
    var description: String { "no picture decoded" }
  }
}
