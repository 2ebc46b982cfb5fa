import Foundation
import Synchronization
import WCSLocalServer

@testable import WCSCodecs
@testable import WCSProtocols

// The parsers that landed with H.264, TURN over TCP/TLS, the SIP audio bridge and the VP8
// decoder's size cap: each takes any bytes, must not crash, and checks a property.
extension FuzzTarget {
  /// Packets as in `vp8` (`videoPackets`) into the depacketizer and an access-unit assembler; every
  /// access unit stays under the assembler's caps and its SPS, when it carries one, parses
  /// into a picture inside the limit. The whole input is also parsed as one SPS NAL unit.
  static func h264(_ bytes: [UInt8]) throws(Violation) -> Bool {
    var accepted = (try? H264SequenceParameterSet(nalUnit: bytes)) != nil
    var assembler = H264AccessUnitAssembler(maxAccessUnitSize: 64 << 10, maxNALUnits: 16)
    for packet in videoPackets(bytes) {
      if (try? H264Depacketizer.parse(packet.payload[...])) != nil { accepted = true }
      let output = assembler.insert(packet)
      for unit in output.accessUnits {
        try check(
          unit.data.count <= assembler.maxAccessUnitSize,
          "an access unit of \(unit.data.count) bytes passed the cap")
        try checkSPS(in: unit.data, limit: assembler.pictureLimit)
      }
    }
    return accepted
  }

  /// Each Annex B NAL unit of type 7 in `annexB` parses and is inside `limit`.
  private static func checkSPS(in annexB: [UInt8], limit: H264PictureLimit) throws(Violation) {
    for nal in H264AnnexB.nalUnits(annexB) where nal.first.map({ $0 & 0x1F }) == 7 {
      guard let sps = try? H264SequenceParameterSet(nalUnit: nal) else {
        throw Violation(description: "an assembled access unit holds an SPS that does not parse")
      }
      try check(
        limit.allows((sps.widthInMacroblocks * 16, sps.heightInMacroblocks * 16)),
        "an assembled SPS announces \(sps.width)x\(sps.height), over \(limit)")
    }
  }

  /// The input as a TCP stream from a TURN server: the first byte picks the chunk sizes, the
  /// rest is cut into chunks fed to both framers. Cutting never changes the frames (they are
  /// those of the whole stream at once), none is over the maximum; the TURN frames then answer
  /// a TURN client over TCP (transaction IDs patched in and signed responses signed again).
  static func stream(_ bytes: [UInt8]) throws(Violation) -> Bool {
    guard let seed = bytes.first else { return false }
    let stream = Array(bytes.dropFirst())
    var accepted = false
    for framing in [ICEStreamFramer.Framing.rfc4571, .turn] {
      var whole = ICEStreamFramer(framing: framing, maximumFrameLength: 2048)
      let expected = try? whole.receive(stream)
      var chunked = ICEStreamFramer(framing: framing, maximumFrameLength: 2048)
      var frames: [[UInt8]] = []
      var failed = false
      var offset = 0
      var step = 0
      while offset < stream.count {
        let size = 1 + (Int(seed) >> (step % 4 * 2) & 3) * 7 + step % 5
        let end = min(stream.count, offset + size)
        do {
          frames += try chunked.receive(stream[offset..<end])
        } catch {
          failed = true
          break
        }
        offset = end
        step += 1
      }
      if let expected {
        try check(!failed, "\(framing): a cut stream failed where the whole one did not")
        try check(frames == expected, "\(framing): cutting the stream changed its frames")
        try check(
          frames.allSatisfy { $0.count <= 2048 + 4 }, "\(framing): a frame over the maximum")
        accepted = accepted || !frames.isEmpty
        if framing == .turn { turnOverStream(frames) }
      } else {
        try check(
          failed || chunked.bufferedBytes > 0 || stream.isEmpty, "\(framing): failures differ")
      }
      if !whole.hasFailed { _ = try? whole.finish() }
    }
    return accepted
  }

  /// A TURN client over TCP answered by `frames` (ChannelData among them once allocated).
  private static func turnOverStream(_ frames: [[UInt8]]) {
    let server = ICETURNServer(
      address: ICETransportAddress(ip: .loopbackV4, port: 3478), username: "user",
      password: "secret", transport: .tcp)
    let client = TURNClient(server: server, socket: 1, randomSeed: 7)
    client.start(now: MediaInstant(nanoseconds: 0))
    var now = MediaInstant(nanoseconds: 0)
    var realm = ""
    for frame in frames.prefix(16) {
      var response = frame
      if let request = client.takeDatagrams().last, request.bytes.count >= 20,
        response.count >= 20, STUNMessage.looksLikeSTUN(response)
      {
        response.replaceSubrange(8..<20, with: request.bytes[8..<20])
        // A signed response is signed again over the patched ID, as the server would have.
        if let message = try? STUNMessage.decode(response) {
          realm = message.realm ?? realm
          if message.messageIntegrity != nil,
            let key = try? STUNIntegrityKey.longTerm(
              username: "user", realm: realm, password: "secret"),
            let signed = try? message.encode(key: key)
          {
            response = signed
          }
        }
      }
      now += .milliseconds(50)
      _ = client.receive(response, now: now)
      _ = client.takeEvents()
    }
    now += .seconds(600)
    client.handleTimeout(now: now)
    _ = client.takeDatagrams()
  }

  /// Pieces split at "\n\n" into a SIP call's audio bridge: the first byte says which side
  /// sent it (bit 0: SIP), the codec change (bits 1-2: none, μ-law, A-law, Opus 111) and hold
  /// (bit 3); the rest is an RTP packet. Whatever goes out is RTP with the bridge's SSRC.
  static func callMedia(_ bytes: [UInt8]) throws(Violation) -> Bool {
    guard var bridge = try? CallMediaBridge(webRTCPayloadType: 111, webRTCSSRC: 1, sipSSRC: 2)
    else { return false }
    var accepted = false
    for piece in split(bytes, separator: [0x0A, 0x0A]).prefix(256) {
      guard let flags = piece.first else { continue }
      let packet = Array(piece.dropFirst())
      switch flags >> 1 & 3 {
      case 1: bridge.setSIPCodec(.g711(.muLaw))
      case 2: bridge.setSIPCodec(.g711(.aLaw))
      case 3: bridge.setSIPCodec(.opus(111))
      default: break
      }
      bridge.holding = flags & 0x08 != 0
      if flags & 1 != 0 {
        for out in bridge.receiveFromSIP(packet) {
          accepted = true
          try check(
            (try? RTPPacket.parse(out))?.header.ssrc == bridge.webRTCSSRC,
            "audio to WebRTC is not RTP with the bridge's SSRC")
        }
      } else if let out = bridge.receiveFromWebRTC(packet) {
        accepted = true
        try check(
          (try? RTPPacket.parse(out))?.header.ssrc == bridge.sipSSRC,
          "audio to SIP is not RTP with the bridge's SSRC")
      }
    }
    return accepted
  }

  /// The input as one VP8 frame into libvpx behind a 640×480 picture cap: a decoded picture
  /// is never over the cap.
  static func vp8Decoder(_ bytes: [UInt8]) throws(Violation) -> Bool {
    let limit = VP8PictureLimit(maximumDimension: 640, maximumPixels: 640 * 480)
    // One decoder per process: libvpx keeps its reference frames between inputs, as a
    // stream would, and opening one per input would dominate the run.
    let size = sharedVP8Decoder.withLock { decoder -> (width: Int, height: Int)? in
      if decoder == nil { decoder = try? VP8Decoder(pictureLimit: limit) }
      guard let image = try? decoder?.decode(bytes) else { return nil }
      return (image.width, image.height)
    }
    guard let size else { return false }
    try check(limit.allows(size), "decoded \(size.width)x\(size.height), over \(limit)")
    return true
  }

  private static let sharedVP8Decoder = Mutex<VP8Decoder?>(nil)
}
