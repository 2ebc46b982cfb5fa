import Foundation

@testable import WCSCodecs
@testable import WCSProtocols

extension FuzzTarget {
  /// Valid inputs for the targets that have no captured data in `../shared/corpus`: real
  /// encoder output (OpenH264, libvpx, Opus) and STUN as the peers send it, in each target's
  /// input shape. `FuzzCorpusTests` checks that each is accepted and writes them as the
  /// committed `ok-*` seeds when `FUZZ_WRITE_SEEDS` is set.
  /// - Returns: (file name, bytes) pairs; empty for the other targets.
  /// - Throws: when an encoder fails.
  public func seeds() throws -> [(name: String, bytes: [UInt8])] {
    switch self {
    case .h264: return try Self.h264Seeds()
    case .stream: return try Self.streamSeeds()
    case .callMedia: return try Self.callMediaSeeds()
    case .vp8Decoder: return try Self.vp8DecoderSeeds()
    case .ice: return try Self.iceSeeds()
    case .pull: return try Self.pullSeeds()
    default: return []
    }
  }

  /// Pieces in the shape of the `vp8` and `h264` targets: delta 1, flags (marker, new
  /// timestamp), payload; joined with "\n\n".
  static func packetPieces(_ payloads: [PacketizedPayload]) -> [UInt8] {
    var out: [UInt8] = []
    var lastTimestamp: UInt32?
    for (index, payload) in payloads.enumerated() {
      if index > 0 { out += [0x0A, 0x0A] }
      let next = lastTimestamp.map { $0 != payload.timestamp } ?? false
      lastTimestamp = payload.timestamp
      out += [3, (payload.marker ? 1 : 0) | (next ? 2 : 0)] + payload.payload
    }
    return out
  }

  static func h264Seeds() throws -> [(name: String, bytes: [UInt8])] {
    let encoder = try H264Encoder(
      configuration: .init(width: 160, height: 120, bitrateKbps: 200))
    var packetizer = H264Packetizer(maxPayloadSize: 300)
    var payloads: [PacketizedPayload] = []
    var sps: [UInt8] = []
    for index in 0..<3 {
      let picture = I420Image(width: 160, height: 120, y: UInt8(60 + 40 * index))
      for frame in try encoder.encode(picture, timestamp: UInt32(index * 3000)) {
        if sps.isEmpty,
          let unit = H264AnnexB.nalUnits(frame.data).first(where: { $0.first == 0x67 })
        {
          sps = Array(unit)
        }
        payloads += packetizer.packetize(frame)
      }
    }
    return [("ok-openh264-key-then-delta", packetPieces(payloads)), ("ok-openh264-sps", sps)]
  }

  static func vp8DecoderSeeds() throws -> [(name: String, bytes: [UInt8])] {
    let encoder = try VP8Encoder(
      configuration: .init(width: 64, height: 48, frameRate: 30, bitrateKbps: 100))
    let frames = try encoder.encode(I420Image(width: 64, height: 48, y: 80), timestamp: 0)
    return frames.first.map { [("ok-libvpx-key-64x48", $0.data)] } ?? []
  }

  /// RTP with Opus from the WebRTC side (codec Opus 111 on SIP), and G.711 μ-law from SIP.
  static func callMediaSeeds() throws -> [(name: String, bytes: [UInt8])] {
    let opus = try OpusEncoder()
    let silence = PCMAudioFrame(samples: [Int16](repeating: 0, count: 960), channels: 1)
    var webRTC: [UInt8] = []
    var sip: [UInt8] = []
    for index in 0..<3 {
      let packet = try RTPPacket(
        header: RTPHeader(
          payloadType: 111, sequenceNumber: UInt16(index), timestamp: UInt32(index * 960),
          ssrc: 9),
        payload: opus.encode(silence)
      ).serialized()
      webRTC += (index == 0 ? [] : [0x0A, 0x0A]) + [0x06] + packet
      let pcmu = try RTPPacket(
        header: RTPHeader(
          payloadType: 0, sequenceNumber: UInt16(index), timestamp: UInt32(index * 160),
          ssrc: 8),
        payload: [UInt8](repeating: 0xFF, count: 160)
      ).serialized()
      sip += (index == 0 ? [] : [0x0A, 0x0A]) + [0x03] + pcmu
    }
    return [("ok-opus-from-webrtc", webRTC), ("ok-pcmu-from-sip", sip)]
  }

  /// A Binding request from the peer (signed again by the target) and a success response to
  /// our check (its transaction ID patched in).
  static func iceSeeds() throws -> [(name: String, bytes: [UInt8])] {
    let request = try STUNMessage(
      type: STUNMessageType(method: .binding, messageClass: .request),
      attributes: [
        .username("\(iceLocal.ufrag):\(iceRemote.ufrag)"), .priority(1_853_817_087),
        .iceControlled(2), .useCandidate,
      ]
    ).encode()
    let response = try STUNMessage(
      type: STUNMessageType(method: .binding, messageClass: .successResponse),
      attributes: [.xorMappedAddress(ICETransportAddress(ip: .loopbackV4, port: 5000))]
    ).encode()
    let separator: [UInt8] = [0x0A, 0x0A, 0x0A, 0x0A]
    return [
      ("ok-binding-request-and-response", [0x01] + request + separator + [0x03] + response),
      ("ok-peer-reflexive-request", [0x05] + request),
    ]
  }

  /// A TURN 401 challenge and an Allocate success on a TCP stream, then ChannelData.
  static func streamSeeds() throws -> [(name: String, bytes: [UInt8])] {
    let challenge = try STUNMessage(
      type: STUNMessageType(method: .allocate, messageClass: .errorResponse),
      attributes: [.errorCode(code: 401, reason: "Unauthorized"), .realm("r"), .nonce("n")]
    ).encode()
    let success = try STUNMessage(
      type: STUNMessageType(method: .allocate, messageClass: .successResponse),
      attributes: [
        .xorRelayedAddress(ICETransportAddress(ip: .loopbackV4, port: 50_000)),
        .xorMappedAddress(ICETransportAddress(ip: .loopbackV4, port: 5000)), .lifetime(600),
      ]
    ).encode(
      key: STUNIntegrityKey.longTerm(username: "user", realm: "r", password: "secret"))
    let channelData: [UInt8] = [0x40, 0x00, 0x00, 0x05, 1, 2, 3, 4, 5, 0, 0, 0]
    let framed4571: [UInt8] = [0x00, 0x03, 7, 8, 9, 0x00, 0x01, 0x2A]
    return [
      ("ok-turn-challenge-allocate-channeldata", [0x9C] + challenge + success + channelData),
      ("ok-rfc4571-frames", [0x27] + framed4571),
    ]
  }

  /// OpenH264 pictures at 30 fps as libavformat hands them over from RTSP (Annex B, parameter
  /// sets in the extradata) and from RTMP (an avcC record, 4-byte lengths), between them blocks
  /// of a 440 Hz tone as a decoder gives them (1024 samples, AAC's frame, at 48 kHz), in the
  /// `pull` target's shape.
  static func pullSeeds() throws -> [(name: String, bytes: [UInt8])] {
    let encoder = try H264Encoder(configuration: .init(width: 160, height: 120, bitrateKbps: 200))
    var pictures: [[ArraySlice<UInt8>]] = []
    for index in 0..<4 {
      let picture = I420Image(width: 160, height: 120, y: UInt8(60 + 30 * index))
      for frame in try encoder.encode(picture, timestamp: UInt32(index * 3000)) {
        pictures.append(H264AnnexB.nalUnits(frame.data))
      }
    }
    let isParameterSet = { (unit: ArraySlice<UInt8>) in
      [H264NALUnitType.sps, H264NALUnitType.pps].contains(H264NALUnitType.of(unit[unit.startIndex]))
    }
    let parameterSets = pictures.first?.filter(isParameterSet) ?? []
    guard parameterSets.count == 2 else { throw Violation(description: "OpenH264 sent no SPS/PPS") }
    let sps = parameterSets[0]
    let pps = parameterSets[1]
    let avcC: [UInt8] =
      [0x01, sps[sps.startIndex + 1], sps[sps.startIndex + 2], sps[sps.startIndex + 3], 0xFF, 0xE1]
      + [UInt8(sps.count >> 8), UInt8(sps.count & 0xFF)] + sps
      + [0x01, UInt8(pps.count >> 8), UInt8(pps.count & 0xFF)] + pps
    let tone = (0..<1024).map { Int16(8000 * sin(Double($0) * 2 * .pi * 440 / 48_000)) }
    let block = tone.flatMap {
      [UInt8(UInt16(bitPattern: $0) & 0xFF), UInt8(UInt16(bitPattern: $0) >> 8)]
    }
    // Packets in time order (100 µs units): a picture each 333, a block each 213.3.
    var events: [(time: Int, picture: Int?)] = pictures.indices.map { ($0 * 333, $0) }
    events += (0..<pictures.count * 3 / 2).map { ((Int($0) * 6400 + 15) / 30, nil) }
    events.sort { $0.time < $1.time }
    func seed(avc: Bool, stereo: Bool) -> [UInt8] {
      var out: [UInt8] = [stereo ? 1 : 0] + (avc ? avcC : H264AnnexB.stream(parameterSets))
      var last = 0
      for event in events {
        let step = event.time - last
        last = event.time
        // Arrival: as far after the previous packet as the pts says, in 4 ms steps.
        let header: [UInt8] = [UInt8((step + 20) / 40) << 3, UInt8(step >> 8), UInt8(step & 0xFF)]
        out += [0x0A, 0x0A]
        guard let picture = event.picture else {
          out +=
            [header[0] | 1] + header.dropFirst()
            + (stereo ? zip(block, block).flatMap { [$0, $1] } : block)
          continue
        }
        let slices = pictures[picture].filter { !isParameterSet($0) }
        let key = slices.contains {
          H264NALUnitType.of($0[$0.startIndex]) == H264NALUnitType.idrSlice
        }
        out += [header[0] | (key ? 4 : 0)] + header.dropFirst()
        out +=
          avc
          ? slices.flatMap { [0, 0, UInt8($0.count >> 8), UInt8($0.count & 0xFF)] + $0 }
          : H264AnnexB.stream(slices)
      }
      return out
    }
    return [
      ("ok-openh264-rtsp-annexb-aac-mono", seed(avc: false, stereo: false)),
      ("ok-openh264-rtmp-avcc-aac-stereo", seed(avc: true, stereo: true)),
    ]
  }
}
