import Foundation
import WCSMedia

/// What the relay needs to know about one offered codec: the media kind and clock rate of a
/// payload type.
struct RelayCodec: Equatable, Sendable {
  enum Kind: Equatable, Sendable {
    case audio
    case video
  }
  /// `audio` or `video`.
  var kind: Kind
  /// Encoding name as in `a=rtpmap` (`opus`, `VP8`).
  var name: String
  /// RTP clock rate, Hz.
  var clockRate: Int
}

/// The codecs the local server relays and records (wcs-protocol.md §9.3): Opus and VP8.
enum RelayCodecs {
  static let relayed = ["opus", "VP8"]

  /// Payload type → codec for the Opus and VP8 formats of every section of `sdp`.
  static func payloadTypes(in sdp: SessionDescription) -> [UInt8: RelayCodec] {
    var map: [UInt8: RelayCodec] = [:]
    for section in sdp.media where !section.isRejected {
      let kind: RelayCodec.Kind
      switch section.media {
      case "audio": kind = .audio
      case "video": kind = .video
      default: continue
      }
      for rtpMap in section.rtpMaps {
        guard
          relayed.contains(where: { $0.caseInsensitiveCompare(rtpMap.encodingName) == .orderedSame }
          ),
          let payloadType = UInt8(exactly: rtpMap.payloadType), payloadType < 128
        else { continue }
        map[payloadType] = RelayCodec(
          kind: kind, name: rtpMap.encodingName, clockRate: rtpMap.clockRate)
      }
    }
    return map
  }

  /// For each publisher payload type, the player's payload type of the same codec (first match
  /// by name, case-insensitive, and clock rate); codecs the player lacks are left out.
  static func payloadTypeMap(
    publisher: [UInt8: RelayCodec], player: [UInt8: RelayCodec]
  ) -> [UInt8: UInt8] {
    var map: [UInt8: UInt8] = [:]
    for (publisherType, codec) in publisher {
      let match = player.filter {
        $0.value.kind == codec.kind && $0.value.clockRate == codec.clockRate
          && $0.value.name.caseInsensitiveCompare(codec.name) == .orderedSame
      }.keys.min()
      if let match { map[publisherType] = match }
    }
    return map
  }
}
