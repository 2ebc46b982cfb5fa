import WCSProtocols

/// The play path's flat receive of the common RTP packet: media (not RTX) of a source already
/// routed by its SSRC, of the common shape (`InOrderRTPPacket`: version 2, no padding, no
/// CSRCs, at most a small one-byte header extension), of the source's payload type, and in
/// order (the next sequence number or a few ahead, RFC 3550 §A.1) so the video jitter buffer
/// appends it or the audio stream hands it straight out (`RTPReceiveStream.acceptInOrder`).
/// That is nearly every packet of a stream (see `InOrderRTPReceptionEquivalenceTests`).
///
/// Why: between two packets the decoder and the kernel evict the caches, so every packet runs
/// its path cold and the code lines it touches cost more than the work done on them
/// (docs/performance.md, `PipelineBench raw-receive 10 400`). The layered path (`PacketReception.admit` →
/// `RTPPacket.parse` → `Admission` → `RTPReceiveStream.receive` → `accept` → `Result`/`Output`
/// → `deliver`, with instant arithmetic on the way) touched ~216 lines a packet; this one reads
/// each header field once and goes from the bytes to the jitter buffer slot or the audio track
/// in a few functions.
///
/// Its pieces (`receiveInOrder`, `InOrderRTPPacket`, `acceptInOrder` and the statistics' and
/// jitter buffer's in-order steps) are `@inline(__always)`: one function instead of ten, each
/// with its own prologue, epilogue and partly used code lines (docs/performance.md,
/// `scripts/play-instructions.sh`).
///
/// Any other packet, or a connection that is closed or not playing, is left untouched (nil) to
/// `receiveLayered`, which handles every case as before. The state after either is the same:
/// counters, statistics, NACK, jitter buffer, transport-wide arrivals, the deadline to arm.
extension NativeMediaConnection.PacketReception {
  /// A packet `receiveInOrder` took: its source, the packets to hand to the audio track now
  /// (empty for video: the jitter buffer holds it) and the earliest of the source's and the
  /// transport feedback's deadlines.
  struct InOrderReception {
    let entry: NativeMediaConnection.ReceiveEntry
    var packets: [ReceivedRTPPacket]
    let deadline: MediaInstant
  }

  /// Takes the RTP packet in `raw` (SSRC `ssrc`, arrived at `now`) when it is the common case
  /// above, with the same effects as `admit` and the source's `receive` would have; nil, with
  /// nothing changed, otherwise.
  @inline(__always)
  mutating func receiveInOrder(
    _ raw: UnsafeRawBufferPointer, ssrc: UInt32, now: MediaInstant, clockOrigin: MediaInstant
  ) -> InOrderReception? {
    guard !closed,
      let header = InOrderRTPPacket(raw, ssrc: ssrc, transportWideCCID: transportWideCCID),
      rtxPayloadType != header.payloadType, let entry = route(ssrc),
      let accepted = entry.stream.acceptInOrder(header, now: now)
    else { return nil }
    counters.packetsReceived += 1
    counters.bytesReceived += UInt64(raw.count)
    var deadline = accepted.deadline
    if let sequenceNumber = header.transportSequenceNumber,
      let due = transportFeedbackGenerator.recordArrivalInOrder(
        transportSequenceNumber: sequenceNumber, arrivalTime: (now - clockOrigin).microseconds)
    {
      deadline = min(deadline, clockOrigin + .microseconds(Int(due)))
    }
    if entry.isVideo { videoBytes += UInt64(raw.count) }
    return InOrderReception(entry: entry, packets: accepted.packets, deadline: deadline)
  }
}
