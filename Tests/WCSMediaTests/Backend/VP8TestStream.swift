import Foundation

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSMedia
@testable import WCSProtocols

/// The virtual camera encoded with VP8 and packetized (RFC 7741), as a played track receives
/// it: the RTP packets of each frame (90 kHz timestamps `frameInterval` apart, sequence numbers
/// from `firstSequence`, wrapping), and the pictures an independent decoder makes of them.
struct VP8TestStream {
  static let frameInterval: UInt32 = 3000

  var packets: [[ReceivedRTPPacket]] = []
  var pictures: [I420Image] = []

  init(
    count: Int, width: Int = 320, height: Int = 240, bitrateKbps: Int = 400,
    firstSequence: UInt16 = 65_530
  ) throws {
    let camera = VirtualCamera(width: width, height: height, frameRate: 30)
    let encoder = try VP8Encoder(
      configuration: .init(
        width: width, height: height, frameRate: 30, bitrateKbps: bitrateKbps))
    let decoder = try VP8Decoder()
    var packetizer = VP8Packetizer()
    var sequence = firstSequence
    let arrival = MediaInstant.now()
    for index in 0..<count {
      let timestamp = UInt32(index) * Self.frameInterval
      for encoded in try encoder.encode(camera.frame(index), timestamp: timestamp) {
        if let picture = try decoder.decode(encoded.data) { pictures.append(picture) }
        packets.append(
          packetizer.packetize(encoded).map { payload in
            defer { sequence &+= 1 }
            let header = RTPHeader(
              marker: payload.marker, payloadType: 96, sequenceNumber: sequence,
              timestamp: payload.timestamp, ssrc: 0x1234)
            return ReceivedRTPPacket(
              packet: RTPPacket(header: header, payload: payload.payload), arrival: arrival)
          })
      }
    }
  }
}
