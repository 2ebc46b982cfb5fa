import WCSMedia
import WCSTransport

/// Counts and decodes what the browser sends us: RTP packets per payload type and SSRC, VP8
/// frames reassembled and decoded (with their size), Opus packets decoded.
final class MediaReceiveCounter {
  let opusPayloadType: UInt8?
  let vp8PayloadType: UInt8?
  private(set) var packetsByPayloadType: [UInt8: Int] = [:]
  private(set) var ssrcs: Set<UInt32> = []
  private(set) var malformedPackets = 0
  /// Packets whose payload is all padding (Chrome probes bandwidth with them on the media SSRC
  /// when RTX is not negotiated).
  private(set) var paddingOnlyPackets = 0
  private(set) var rtcpPackets = 0
  private(set) var keyFrameRequestsReceived = 0
  private(set) var opusFramesDecoded = 0
  private(set) var opusDecodeErrors = 0
  private(set) var opusPeak: Int16 = 0
  private(set) var vp8FramesDecoded = 0
  private(set) var vp8KeyFrames = 0
  private(set) var vp8DecodeErrors = 0
  private(set) var lastVideoSize: (width: Int, height: Int)?
  /// SSRC of the browser's VP8 stream, once seen (the media SSRC of our PLIs).
  private(set) var videoSSRC: UInt32?
  /// Set when the VP8 assembler asks for a key frame (loss, or no key frame yet); the scenario
  /// sends a PLI and clears it.
  var needsKeyFrame = false
  private(set) var keyFrameRequestsSent = 0
  private var assembler = VP8FrameAssembler()
  private let vp8Decoder: VP8Decoder?
  private let opusDecoder: OpusDecoder?

  init(opusPayloadType: UInt8?, vp8PayloadType: UInt8?) {
    self.opusPayloadType = opusPayloadType
    self.vp8PayloadType = vp8PayloadType
    vp8Decoder = try? VP8Decoder()
    opusDecoder = try? OpusDecoder(channels: 2)
  }

  /// One unprotected RTP packet.
  func receiveRTP(_ packet: UnsafeRawBufferPointer) {
    guard let parsed = try? RTPHeader.parse(packet) else {
      malformedPackets += 1
      return
    }
    let header = parsed.header
    packetsByPayloadType[header.payloadType, default: 0] += 1
    ssrcs.insert(header.ssrc)
    let payload = Array(packet[parsed.payloadRange])
    guard !payload.isEmpty else {
      paddingOnlyPackets += 1
      return
    }
    if header.payloadType == vp8PayloadType {
      videoSSRC = header.ssrc
      receiveVP8(header, payload)
    } else if header.payloadType == opusPayloadType, let opusDecoder {
      do {
        let frame = try opusDecoder.decode(payload, timestamp: header.timestamp)
        opusFramesDecoded += 1
        opusPeak = max(opusPeak, frame.samples.map { $0 == .min ? .max : abs($0) }.max() ?? 0)
      } catch {
        opusDecodeErrors += 1
      }
    }
  }

  /// One unprotected compound RTCP packet; returns true when it asks for a key frame (PLI or
  /// FIR, RFC 4585 §6.3.1, RFC 5104 §4.3.1).
  func receiveRTCP(_ packet: UnsafeRawBufferPointer) -> Bool {
    rtcpPackets += 1
    var offset = 0
    var asksForKeyFrame = false
    while offset + 4 <= packet.count {
      let format = packet[offset] & 0x1F
      let type = packet[offset + 1]
      let words = Int(packet[offset + 2]) << 8 | Int(packet[offset + 3])
      if type == 206 && (format == 1 || format == 4) { asksForKeyFrame = true }
      offset += 4 * (words + 1)
    }
    if asksForKeyFrame { keyFrameRequestsReceived += 1 }
    return asksForKeyFrame
  }

  private func receiveVP8(_ header: RTPHeader, _ payload: [UInt8]) {
    let output = assembler.insert(
      VP8FrameAssembler.Packet(
        sequenceNumber: header.sequenceNumber, timestamp: header.timestamp, marker: header.marker,
        payload: payload))
    if output.needsKeyFrame { needsKeyFrame = true }
    for frame in output.frames {
      if frame.frame.isKeyFrame { vp8KeyFrames += 1 }
      do {
        if let image = try vp8Decoder?.decode(frame.frame.data) {
          vp8FramesDecoded += 1
          lastVideoSize = (image.width, image.height)
        }
      } catch {
        vp8DecodeErrors += 1
      }
    }
  }

  /// Counts one PLI sent for `needsKeyFrame`.
  func keyFrameRequested() {
    needsKeyFrame = false
    keyFrameRequestsSent += 1
  }

  /// The counts as JSON for the page and the summary.
  var json: JSONValue {
    var byPayloadType: [String: JSONValue] = [:]
    for (payloadType, count) in packetsByPayloadType {
      byPayloadType[String(payloadType)] = .number(Double(count))
    }
    return .object([
      "packetsByPayloadType": .object(byPayloadType),
      "ssrcCount": .number(Double(ssrcs.count)),
      "malformedPackets": .number(Double(malformedPackets)),
      "paddingOnlyPackets": .number(Double(paddingOnlyPackets)),
      "rtcpPackets": .number(Double(rtcpPackets)),
      "keyFrameRequests": .number(Double(keyFrameRequestsReceived)),
      "keyFrameRequestsSent": .number(Double(keyFrameRequestsSent)),
      "opusPayloadType": opusPayloadType.map { .number(Double($0)) } ?? .null,
      "opusFramesDecoded": .number(Double(opusFramesDecoded)),
      "opusDecodeErrors": .number(Double(opusDecodeErrors)),
      "opusPeak": .number(Double(opusPeak)),
      "vp8PayloadType": vp8PayloadType.map { .number(Double($0)) } ?? .null,
      "vp8FramesDecoded": .number(Double(vp8FramesDecoded)),
      "vp8KeyFrames": .number(Double(vp8KeyFrames)),
      "vp8DecodeErrors": .number(Double(vp8DecodeErrors)),
      "vp8AssemblerDroppedPackets": .number(Double(assembler.droppedPackets)),
      "vp8AssemblerLatePackets": .number(Double(assembler.latePackets)),
      "vp8AssemblerDiscardedFrames": .number(Double(assembler.discardedFrames)),
      "vp8WaitingForKeyFrame": .bool(assembler.isWaitingForKeyFrame),
      "videoWidth": lastVideoSize.map { .number(Double($0.width)) } ?? .null,
      "videoHeight": lastVideoSize.map { .number(Double($0.height)) } ?? .null,
    ])
  }
}
