import Foundation
import WCSProtocols

/// Play path on the loop: RTP routed to receive streams by negotiated payload type, released
/// packets handed to the decode tracks, feedback sent back.
extension NativeMediaConnection {
  // MARK: - Media in

  /// Parses, counts and routes a received RTP packet (RTX unwrapped, a new source made) and
  /// gives it to its stream; the released packets go to the tracks and the deadlines are armed.
  func receiveRTP(_ ssrc: UInt32, _ raw: UnsafeRawBufferPointer) {
    guard raw.count >= 12 else { return }
    // When it arrived, though the loop may have been busy since.
    let now = loop.datagramArrival ?? loop.mediaNow()
    let play = request.receives
    // Play: the transport feedback's deadline, armed together with the stream's once the packet
    // was handled (one look at the armed poll instead of two); on a return before that, alone.
    var packet: RTPPacket
    let feedbackDue: MediaInstant?
    let entry: ReceiveEntry
    // Restored from RTX by `route`: the media SSRC replaced the RTX one.
    var restored = false
    // One access of the connection for the counters, the feedback and the route.
    switch reception.admit(raw, ssrc: ssrc, now: now, clockOrigin: mediaClockOrigin, play: play) {
    case .closed:
      return
    case .malformed:
      extra.malformedPackets += 1
      return
    case .admitted(let admitted, let routed, let due):
      packet = admitted
      feedbackDue = due
      if let routed {
        entry = routed
      } else {
        guard let found = route(&packet, ssrc: ssrc, now: now, feedbackDue: feedbackDue) else {
          return
        }
        entry = found
        restored = packet.header.ssrc != ssrc
        if entry.isVideo { videoBytes += UInt64(raw.count) }
      }
    }
    let (result, deadline) = entry.receive(packet, now: now, restored: restored)
    if case .success(let output) = consume result {
      deliver(output, isVideo: entry.isVideo, now: now)
      // The audio track has copied the packets out: their array's storage serves the next
      // packet (one goes out on each arrival).
      entry.audio?.recycle((consume output).packets)
    }
    if play {
      pollNoLaterThan(feedbackDue.map { min($0, deadline) } ?? deadline)
    }
  }

  /// The source of a packet `PacketReception.admit` did not route: RTX (RFC 4588) restored to
  /// its media packet, or a new source; nil (counted malformed, the feedback's deadline armed)
  /// when there is none.
  private func route(
    _ packet: inout RTPPacket, ssrc: UInt32, now: MediaInstant, feedbackDue: MediaInstant?
  ) -> ReceiveEntry? {
    var mediaSSRC = ssrc
    if let rtx = rtxPayloadType, packet.header.payloadType == rtx {
      // RTX (RFC 4588): the answer of a relay may carry no ssrc-group, so the repaired
      // stream is the one video source seen, and its RTX stream the first RTX SSRC seen
      // (taken over like a media source after a silence).
      if let current = rtxSource, current.ssrc != ssrc,
        now - current.lastPacketAt < Self.sourceTakeoverSilence
      {
        extra.malformedPackets += 1
        if let feedbackDue { pollNoLaterThan(feedbackDue) }
        return nil
      }
      rtxSource = (ssrc, now)
      guard let video = receivers.first(where: { $0.value.isVideo })?.key,
        let restored = try? RTXPacketFormat.unwrap(
          packet, ssrc: video, payloadType: videoPayloadType)
      else {
        extra.malformedPackets += 1
        if let feedbackDue { pollNoLaterThan(feedbackDue) }
        return nil
      }
      packet = restored
      mediaSSRC = video
    }
    if let existing = receivers[mediaSSRC] { return existing }
    guard let made = makeReceiver(ssrc: mediaSSRC, payloadType: packet.header.payloadType, now: now)
    else {
      extra.malformedPackets += 1
      if let feedbackDue { pollNoLaterThan(feedbackDue) }
      return nil
    }
    receivers[mediaSSRC] = made
    return made
  }

  func makeReceiver(ssrc: UInt32, payloadType: UInt8, now: MediaInstant)
    -> ReceiveEntry?
  {
    let isVideo: Bool
    if payloadType == videoPayloadType, videoReceiveTrack != nil {
      isVideo = true
    } else if payloadType == audioPayloadType, audioReceiveTrack != nil {
      isVideo = false
    } else {
      return nil
    }
    if let current = receivers.first(where: { $0.value.isVideo == isVideo }) {
      guard now - current.value.lastPacketAt >= Self.sourceTakeoverSilence else { return nil }
      receivers[current.key] = nil
      // The track and its assembler stay: without starting over, a new numbering that lands
      // up to 2,048 behind the old one's last frame would be dropped as late until it passed.
      if isVideo { videoReceiveTrack?.sourceChanged() }
    }
    let source = RTPReceiveSource.Configuration(
      ssrc: ssrc, localSSRC: localSSRC, payloadType: payloadType,
      clockRate: isVideo ? 90_000 : 48_000)
    if isVideo {
      return ReceiveEntry(
        video: VideoReceiveStream(configuration: .init(source: source), now: now), ssrc: ssrc)
    }
    return ReceiveEntry(audio: AudioReceiveStream(configuration: source, now: now), ssrc: ssrc)
  }

  func deliver(
    _ output: RTPReceiveSource.Output, isVideo: Bool, now: MediaInstant
  ) {
    // Both tracks and `sendRTCP` do nothing with nothing (most packets wait in the buffer).
    guard !output.packets.isEmpty || !output.rtcp.isEmpty else { return }
    if isVideo {
      videoReceiveTrack?.handle(output.packets, now: now)
    } else {
      audioReceiveTrack?.handle(output.packets)
    }
    sendRTCP(output.rtcp)
  }

  func requestKeyFrameFromSender() {
    for entry in receivers.values where entry.isVideo {
      entry.video?.requestKeyFrame()
      if request.receives { pollNoLaterThan(entry.nextDeadline) }
    }
  }
}

extension NativeMediaConnection.PacketReception {
  /// What `admit` made of a received RTP packet.
  enum Admission {
    /// The connection is closed: dropped, uncounted.
    case closed
    /// It does not parse (counted received).
    case malformed
    /// Parsed and counted: the packet, its source when routed by its SSRC (nil for RTX and
    /// for a source not seen yet), and (play) the transport feedback's deadline.
    case admitted(RTPPacket, NativeMediaConnection.ReceiveEntry?, feedbackDue: MediaInstant?)
  }

  /// Counts a received RTP datagram of `raw.count` octets that arrived at `now`, parses it,
  /// records its transport-wide sequence number (in microseconds since `clockOrigin`) and
  /// finds its source by SSRC (counting a video source's bytes).
  mutating func admit(
    _ raw: UnsafeRawBufferPointer, ssrc: UInt32, now: MediaInstant, clockOrigin: MediaInstant,
    play: Bool
  ) -> Admission {
    guard !closed else { return .closed }
    counters.packetsReceived += 1
    counters.bytesReceived += UInt64(raw.count)
    guard let packet = try? RTPPacket.parse(raw) else { return .malformed }
    var feedbackDue: MediaInstant?
    if let id = transportWideCCID,
      let sequenceNumber = TransportWideCC.sequenceNumber(in: packet.header, id: id)
    {
      let due = transportFeedbackGenerator.recordArrival(
        transportSequenceNumber: sequenceNumber, arrivalTime: (now - clockOrigin).microseconds)
      if play, let due {
        // Microsecond `due` itself: it stays put from one packet to the next (`now + (due -
        // arrival)` moved by the sub-microsecond part of `now` and re-armed the poll on most
        // packets), and is at most 1 µs earlier than that was.
        feedbackDue = clockOrigin + .microseconds(Int(due))
      }
    }
    if let rtx = rtxPayloadType, packet.header.payloadType == rtx {
      return .admitted(packet, nil, feedbackDue: feedbackDue)
    }
    let entry = route(ssrc)
    if let entry, entry.isVideo { videoBytes += UInt64(raw.count) }
    return .admitted(packet, entry, feedbackDue: feedbackDue)
  }
}
