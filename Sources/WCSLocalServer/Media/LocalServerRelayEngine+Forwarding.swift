import Foundation
import WCSPeerConnection
import WCSProtocols

// Forwarding: publisher RTP and RTCP in, each player's rewritten copy out.
extension LocalServerRelayEngine {
  func publisherRTP(_ publisher: RelayPublisher, _ raw: UnsafeRawBufferPointer) {
    guard let parsed = try? RTPHeader.parse(raw) else { return }
    var header = parsed.header
    var bytes = [UInt8](raw)
    var payloadRange = parsed.payloadRange
    var retransmitted = false
    if let repaired = publisher.retransmissionPayloadTypes[header.payloadType] {
      // RTX (RFC 4588 §4): restore the original packet; an RTX packet without payload is
      // padding (bandwidth probing) and carries nothing to relay.
      guard let codec = publisher.codecs[repaired],
        let mediaSSRC = publisher.mediaSSRC(repairedBy: header.ssrc, kind: codec.kind),
        let packet = try? RTPPacket.parse(raw),
        let restored = try? RTXPacketFormat.unwrap(
          packet, ssrc: mediaSSRC, payloadType: repaired),
        let restoredBytes = try? restored.serialized(),
        let reparsed = restoredBytes.withUnsafeBytes({ try? RTPHeader.parse($0) })
      else { return }
      header = reparsed.header
      bytes = restoredBytes
      payloadRange = reparsed.payloadRange
      retransmitted = true
    }
    guard let codec = publisher.codecs[header.payloadType] else { return }
    publisher.statistics.packetsIn += 1
    if codec.kind == .video { publisher.statistics.videoBytes += bytes.count }
    if codec.kind == .audio, let tap = publisher.callMediaTap { tap(bytes) }
    if codec.kind == .video, let tap = publisher.callVideoTap { tap(bytes) }
    let now = loop.mediaNow()
    let ssrc = header.ssrc
    if publisher.caches[ssrc] == nil {
      // Each source costs a cache of `packetCacheSize` packets: a publisher inventing SSRCs
      // gets no more than a few.
      guard publisher.caches.count < Self.maxSourcesPerPublisher else {
        publisher.statistics.packetsRefused += 1
        return
      }
      publisher.caches[ssrc] = RelayPacketCache(capacity: configuration.packetCacheSize)
      publisher.reception[ssrc] = RelayReceptionStatistics(ssrc: ssrc, clockRate: codec.clockRate)
    }
    // A second copy (a resend crossing our repeated NACK, or a replay the SRTP window let
    // through after a wrap) is dropped: players and the recording have the first.
    if publisher.caches[ssrc]?.packet(header.sequenceNumber) != nil {
      publisher.statistics.duplicatesDropped += 1
      return
    }
    publisher.caches[ssrc]?.store(bytes, sequenceNumber: header.sequenceNumber)
    publisher.reception[ssrc]?.record(
      sequenceNumber: header.sequenceNumber, timestamp: header.timestamp, now: now,
      retransmitted: retransmitted)
    switch codec.kind {
    case .video: publisher.videoSSRC = ssrc
    case .audio: publisher.audioSSRC = ssrc
    }
    if publisher.nackKinds.contains(codec.kind) {
      trackLoss(publisher, ssrc: ssrc, sequenceNumber: header.sequenceNumber, now: now)
    } else if retransmitted {
      publisher.statistics.retransmissions += 1
    }
    guard payloadRange.lowerBound <= payloadRange.upperBound, payloadRange.upperBound <= bytes.count
    else { return }
    let startsKeyFrame =
      codec.kind == .video
      && (codec.h264 == nil
        ? Self.startsVP8KeyFrame(bytes[payloadRange])
        : H264Depacketizer.startsKeyFrame(bytes[payloadRange]))
    if startsKeyFrame {
      publisher.statistics.keyFrames += 1
      // The last PLI is answered: a deferred one may go out sooner.
      if let deadline = publisher.keyFrameRequests.keyFrameArrived() {
        if let timer = publisher.keyFrameTimer { loop.cancel(timer) }
        scheduleDeferredKeyFrame(publisher, at: deadline)
      }
    }
    if let recording = publisher.recording {
      let payload = Array(bytes[payloadRange])
      switch codec.kind {
      case .video:
        // A frame the file lost for good: its next key frame, asked for like a player's.
        if recording.addVideo(
          sequenceNumber: header.sequenceNumber, timestamp: header.timestamp,
          marker: header.marker, payload: payload)
        {
          _ = requestKeyFrame(publisher)
        }
      case .audio: recording.addAudio(payload, timestamp: header.timestamp)
      }
    }
    if let pusher = publisher.rtmpPush {
      feedRTMPPush(pusher, kind: codec.kind, header: header, payload: bytes[payloadRange], now: now)
    }
    if codec.kind == .video, configuration.snapshots,
      publisher.snapshots.addVideo(
        sequenceNumber: header.sequenceNumber, timestamp: header.timestamp,
        marker: header.marker, payload: Array(bytes[payloadRange]))
    {
      serveWaitingSnapshots(publisher)
    }
    for playerId in publisher.playerIds {
      guard let player = players[playerId], player.connected else { continue }
      if relay(bytes, ssrc: ssrc, codec: codec, from: publisher, to: player, now: now),
        startsKeyFrame
      {
        player.statistics.keyFrames += 1
      }
    }
  }

  /// Whether a VP8 RTP payload (RFC 7741 §4.2 descriptor first) starts a key frame: the first
  /// packet of partition 0 whose VP8 frame tag has the P bit clear (RFC 6386 §9.1).
  static func startsVP8KeyFrame(_ payload: ArraySlice<UInt8>) -> Bool {
    guard let (descriptor, length) = try? VP8PayloadDescriptor.parse(Array(payload.prefix(8))),
      descriptor.startsFrame, payload.count > length
    else { return false }
    return payload[payload.startIndex + length] & 0x01 == 0
  }

  /// Sends `bytes` to `player`, rewritten; true when it went out.
  @discardableResult
  func relay(
    _ bytes: [UInt8], ssrc: UInt32, codec: RelayCodec, from publisher: RelayPublisher,
    to player: RelayPlayer, now: MediaInstant
  ) -> Bool {
    if player.rewriters[ssrc] == nil {
      guard let outgoing = player.ssrcs[codec.kind] else { return false }
      let sameKind = publisher.codecs.filter { $0.value.kind == codec.kind }
      let map = RelayCodecs.payloadTypeMap(publisher: sameKind, player: player.codecs)
      guard !map.isEmpty else { return false }
      player.rewriters[ssrc] = RelayRTPRewriter(
        ssrc: outgoing, payloadTypes: map,
        sequenceOffset: UInt16.random(in: 0...UInt16.max, using: &random),
        timestampOffset: UInt32.random(in: 0...UInt32.max, using: &random))
      player.clockRates[ssrc] = codec.clockRate
    }
    guard let out = player.rewriters[ssrc]?.rewrite(bytes, now: now), sendRTP(out, to: player)
    else { return false }
    if codec.kind == .video { player.statistics.videoBytes += out.count }
    return true
  }

  func sendRTP(_ bytes: [UInt8], to player: RelayPlayer) -> Bool {
    do {
      try player.peerConnection.sendRTP(bytes)
      player.statistics.packetsOut += 1
      return true
    } catch {
      player.statistics.sendFailures += 1
      return false
    }
  }

  /// Sends `packets` as one compound, with an SDES CNAME `cname` after the leading report.
  func sendRTCP(
    _ packets: [RTCPPacket], cname: String, on connection: PeerConnection, failures: inout Int
  ) {
    do {
      try connection.sendRTCP(
        try RTCPPacket.serializeCompound(Self.withSourceDescription(packets, cname: cname)))
    } catch {
      failures += 1
    }
  }

  func publisherRTCP(_ publisher: RelayPublisher, _ raw: UnsafeRawBufferPointer) {
    // Lenient: one malformed sub-packet must not hide the sender report next to it.
    let packets = RTCPPacket.parseCompoundLeniently(raw).packets
    let now = loop.mediaNow()
    for packet in packets {
      switch packet {
      case .senderReport(let report):
        publisher.reception[report.ssrc]?.senderReportReceived(
          ntpTimestamp: report.ntpTimestamp, now: now)
      case .pictureLossIndication, .fullIntraRequest:
        // A call leg's client asks for a key frame of the SIP side's video.
        publisher.callKeyFrameTap?()
      default: break
      }
    }
  }
}
