import Foundation
import WCSCodecs
import WCSProtocols

/// What a publisher's snapshot needs (wcs-protocol.md §3 `snapshot`): the last key frame and
/// the frames after it, put back together from RTP (VP8: RFC 7741; H.264: RFC 6184 access
/// units in Annex B form, which must arrive in sequence order), decoded only when a snapshot is
/// asked for. Loop-confined, like the publisher it belongs to.
///
/// Bounded: at most `maxFrames` frames and `maxBytes` bytes are held; past either, or after a
/// frame lost for good, the held frames are dropped and the next key frame starts again.
package final class RelaySnapshotSource {
  /// The publisher's video codec.
  package enum Codec: Sendable {
    case vp8
    case h264
  }

  /// Frames held at most (10 s at 30 fps).
  static let maxFrames = 300
  /// Bytes held at most.
  static let maxBytes = 8 << 20
  /// Packets a missing one may lag before its frame counts as lost.
  static let reorderWindow = 256

  /// The codec of the packets given to `addVideo`; set before the first one.
  package var codec = Codec.vp8
  private var assembler = VP8FrameAssembler(reorderWindow: RelaySnapshotSource.reorderWindow)
  private var h264Assembler = H264AccessUnitAssembler(
    reorderWindow: RelaySnapshotSource.reorderWindow)
  private(set) var frames: [[UInt8]] = []
  private var bytes = 0

  /// An empty source (VP8 until `codec` says otherwise); RelayBench times one alone.
  package init() {}
  /// Snapshot requests waiting for a key frame, with when they were asked.
  var waiting: [(requestId: String, askedAt: MediaInstant)] = []

  /// Whether a decodable sequence (starting with a key frame) is held.
  package var hasKeyFrame: Bool { !frames.isEmpty }

  /// One video RTP packet of the publisher, of `codec`. Returns `true` when a key frame arrived (waiting
  /// requests can be served).
  @discardableResult
  package func addVideo(sequenceNumber: UInt16, timestamp: UInt32, marker: Bool, payload: [UInt8])
    -> Bool
  {
    let packet = VP8FrameAssembler.Packet(
      sequenceNumber: sequenceNumber, timestamp: timestamp, marker: marker, payload: payload)
    let assembled: [EncodedVideoFrame]
    let needsKeyFrame: Bool
    switch codec {
    case .vp8:
      let output = assembler.insert(packet)
      (assembled, needsKeyFrame) = (output.frames.map(\.frame), output.needsKeyFrame)
    case .h264:
      let output = h264Assembler.insert(packet)
      (assembled, needsKeyFrame) = (output.accessUnits, output.needsKeyFrame)
    }
    if needsKeyFrame, !assembled.contains(where: \.isKeyFrame) {
      // A gap: what follows does not decode from the held frames.
      drop()
    }
    var keyFrameArrived = false
    for frame in assembled {
      let data = frame.data
      if frame.isKeyFrame {
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
  /// - Throws: `VP8Error`/`H264Error` when the decoder cannot be created,
  ///   `SnapshotError.nothingDecoded`, `PictureFileError` from the PNG writer.
  static func png(of frames: [[UInt8]], codec: Codec = .vp8) throws -> [UInt8] {
    let decode: ([UInt8]) throws -> I420Image?
    switch codec {
    case .vp8:
      let decoder = try VP8Decoder()
      decode = { try decoder.decode($0) }
    case .h264:
      let decoder = try H264Decoder()
      decode = { try decoder.decode($0) }
    }
    var latest: I420Image?
    for frame in frames {
      // A frame that does not decode ends the usable run; the picture before it stands.
      let picture: I420Image?
      do { picture = try decode(frame) } catch { break }
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
