import WCSCodecs

/// Reassembles VP8 frames from RTP packets that may arrive out of order or not at all, and hands on
/// only frames the decoder can use (RFC 7741 §4.5).
///
/// A frame is complete when every sequence number from its first packet (S=1, PID=0) to its marker
/// packet is present with the same timestamp. A complete frame is delivered when it follows the last
/// delivered frame (next sequence number, or next PictureID modulo 2^15 or 2^7) or is a key frame.
/// When a packet is still missing after `reorderWindow` later packets arrived, the loss is certain:
/// the assembler drops frames until a key frame and reports `needsKeyFrame` so the receiver can send
/// a PLI (RFC 4585 §6.3.1). It starts out waiting for a key frame.
///
/// Sans-I/O value type: feed packets, read the output. Not for concurrent use.
public struct VP8FrameAssembler: Sendable {
  /// One received RTP packet, as far as the assembler cares.
  public struct Packet: Sendable, Equatable {
    /// RTP sequence number (RFC 3550 §5.1).
    public var sequenceNumber: UInt16
    /// 90 kHz RTP timestamp.
    public var timestamp: UInt32
    /// RTP marker bit: last packet of the frame.
    public var marker: Bool
    /// RTP payload (VP8 payload descriptor + VP8 data).
    public var payload: [UInt8]

    /// A packet from its parts.
    public init(sequenceNumber: UInt16, timestamp: UInt32, marker: Bool, payload: [UInt8]) {
      self.sequenceNumber = sequenceNumber
      self.timestamp = timestamp
      self.marker = marker
      self.payload = payload
    }
  }

  /// A complete, decodable frame.
  public struct Frame: Sendable, Equatable {
    /// The VP8 frame (`isKeyFrame` from the P bit of its first byte) and its RTP timestamp.
    public var frame: EncodedVideoFrame
    /// PictureID from the descriptor of its first packet, if present.
    public var pictureID: UInt16?
    /// Sequence numbers of its first and last packets.
    public var firstSequenceNumber: UInt16
    /// Sequence number of its marker packet.
    public var lastSequenceNumber: UInt16
  }

  /// What one `insert` produced.
  public struct Output: Sendable, Equatable {
    /// Frames to decode, in decoding order.
    public var frames: [Frame] = []
    /// True when the receiver should ask the sender for a key frame now (PLI): a loss was detected,
    /// or frames keep arriving while no key frame has been delivered.
    public var needsKeyFrame = false
    /// The packet was rejected: malformed descriptor or payload header (counted in `droppedPackets`).
    public var dropped: VP8PayloadError?
  }

  private struct Stored {
    /// Extended sequence number (see `extend`).
    var sequence: Int64
    var timestamp: UInt32
    var marker: Bool
    var startsFrame: Bool
    var pictureID: UInt16?
    var pictureIDModulus: UInt16
    var data: ArraySlice<UInt8>
  }

  /// Packets a missing sequence number may lag behind the newest before it counts as lost.
  public let reorderWindow: Int
  /// Most packets buffered; older ones are discarded past this (bounds memory on a bad link).
  public let maxBufferedPackets: Int
  /// Packets rejected as malformed.
  public private(set) var droppedPackets = 0
  /// Packets ignored because they belong to frames already delivered or abandoned (late or
  /// duplicate).
  public private(set) var latePackets = 0
  /// Frames thrown away because a packet before them was lost and they were not key frames.
  public private(set) var discardedFrames = 0
  /// True until the next key frame is delivered (at the start and after a loss).
  public private(set) var isWaitingForKeyFrame = true

  /// The buffered packets in ascending order of extended sequence number, each once, all
  /// after `lastDelivered`. A sorted array rather than a dictionary keyed by sequence number:
  /// packets arrive in order (the jitter buffer releases them so), so inserting is appending,
  /// a frame's packets are neighbours, and delivering drops a prefix, with no hashing.
  private var packets: [Stored] = []
  /// The sequence numbers, extended; `highest` is that of the newest packet taken.
  private var sequenceNumbers = RTPExtendedSequenceNumber()
  private var highest: Int64? { sequenceNumbers.highest }
  private var lastDelivered: Int64?
  private var lastPictureID: UInt16?
  private var requestedAt: Int64?
  private var waitingSince: Int64?
  /// The last packet that came more than `maxBufferedPackets` behind the last delivered frame
  /// (no reordering is that deep): if the next one follows it, the numbering restarted.
  private var renumberingCandidate: Packet?
  /// Room for the bytes of a frame of several packets, kept for the next one's.
  private var joined: [UInt8] = []

  /// An assembler.
  /// - Parameters:
  ///   - reorderWindow: packets, at least 1 (default 30).
  ///   - maxBufferedPackets: at least 64 (default 2048).
  public init(reorderWindow: Int = 30, maxBufferedPackets: Int = 2048) {
    self.reorderWindow = max(1, reorderWindow)
    self.maxBufferedPackets = max(64, maxBufferedPackets)
  }

  /// Takes one packet and returns the frames that became decodable.
  public mutating func insert(_ packet: Packet) -> Output {
    var sink = OutputSink()
    let status = insert(packet, into: &sink)
    sink.output.needsKeyFrame = status.needsKeyFrame
    sink.output.dropped = status.dropped
    return sink.output
  }

  /// `insert(_:)` handing each frame that becomes decodable to `sink` as it is found, in
  /// decoding order, instead of collecting the frames (and a new array of bytes for each) in an
  /// `Output`. Returns the rest of what `insert(_:)` returns.
  mutating func insert<Sink: VP8FrameSink>(_ packet: Packet, into sink: inout Sink)
    -> InsertStatus
  {
    var status = InsertStatus()
    guard let candidate = store(packet, into: &sink, status: &status) else { return status }
    restartNumbering()
    latePackets -= 1  // the candidate was not late after all
    // The candidate's frames, then the packet's. Neither starts a new numbering again: after
    // the restart nothing before the candidate was delivered, and the packet follows it.
    // (Not a recursive `insert`: a profiler then mixes up the costs of the two levels.)
    _ = store(candidate, into: &sink, status: &status)
    var next = InsertStatus()
    _ = store(packet, into: &sink, status: &next)
    status.needsKeyFrame = status.needsKeyFrame || next.needsKeyFrame
    return status
  }

  /// `insert(_:into:)` for one packet, into `status`; returns the renumbering candidate
  /// instead when it and `packet` make a new numbering (nothing done then).
  private mutating func store<Sink: VP8FrameSink>(
    _ packet: Packet, into sink: inout Sink, status: inout InsertStatus
  ) -> Packet? {
    let parsed: VP8PayloadPacket
    do {
      parsed = try VP8Depacketizer.parse(packet.payload)
    } catch {
      droppedPackets += 1
      status.dropped = error
      return nil
    }
    let sequence = sequenceNumbers.extended(packet.sequenceNumber)
    if let lastDelivered, sequence <= lastDelivered {
      if lastDelivered - sequence > Int64(maxBufferedPackets) {
        // Two packets in a row, one after the other, this far behind: a new source took over
        // the stream (or the sender renumbered). Taking them for late ones would freeze the
        // video until the new numbering passed the old (up to 32,768 packets).
        if let candidate = renumberingCandidate,
          packet.sequenceNumber == candidate.sequenceNumber &+ 1
        {
          return candidate
        }
        renumberingCandidate = packet
      } else {
        renumberingCandidate = nil
      }
      latePackets += 1
      return nil
    }
    // Only two in a row make a new numbering.
    if renumberingCandidate != nil { renumberingCandidate = nil }
    let index = firstIndex(notBelow: sequence)
    if index < packets.count, packets[index].sequence == sequence {
      latePackets += 1
      return nil
    }
    // Made where it is stored (a `Stored` bound first is copied into the array, then
    // destroyed), with the data moved out of the parsed packet.
    let startsFrame = parsed.descriptor.startsFrame
    let pictureID = parsed.descriptor.pictureID
    let pictureIDModulus = parsed.descriptor.pictureIDModulus
    if index == packets.count {
      packets.append(
        Stored(
          sequence: sequence, timestamp: packet.timestamp, marker: packet.marker,
          startsFrame: startsFrame, pictureID: pictureID, pictureIDModulus: pictureIDModulus,
          data: (consume parsed).data))
    } else {
      packets.insert(
        Stored(
          sequence: sequence, timestamp: packet.timestamp, marker: packet.marker,
          startsFrame: startsFrame, pictureID: pictureID, pictureIDModulus: pictureIDModulus,
          data: (consume parsed).data), at: index)
    }
    sequenceNumbers.record(sequence)
    let trimmed = trimBuffer()
    // Where the packet is now, unless the trim took it.
    if index >= trimmed { drain(from: index - trimmed, into: &sink) }
    status.needsKeyFrame = detectLoss()
    return nil
  }

  /// The index of the first buffered packet whose sequence number is `sequence` or later
  /// (`packets.count` when none is): the end for a packet in order, else a binary search.
  private func firstIndex(notBelow sequence: Int64) -> Int {
    packets.firstIndex(notBelow: sequence) { $0.sequence }
  }

  /// The index of the last packet of the complete frame whose first packet is at `start`, if
  /// complete: its packets are neighbours in `packets` with consecutive sequence numbers.
  // Fields are read in place throughout: a copy of a `Stored` retains and releases its data.
  private func completeFrame(startingAt start: Int) -> Int? {
    guard packets[start].startsFrame else { return nil }
    let timestamp = packets[start].timestamp
    var index = start
    var sequence = packets[start].sequence
    while index < packets.count, packets[index].sequence == sequence,
      packets[index].timestamp == timestamp
    {
      if packets[index].marker { return index }
      if index != start, packets[index].startsFrame { return nil }
      index += 1
      sequence += 1
    }
    return nil
  }

  private func follows(first: Int64, pictureID: UInt16?, modulus: UInt16) -> Bool {
    guard let lastDelivered else { return false }
    if first == lastDelivered + 1 { return true }
    if let pictureID, let lastPictureID {
      return pictureID == (lastPictureID &+ 1) % modulus
    }
    return false
  }

  /// Delivers what storing the packet at `stored` made decodable: its frame, if now complete
  /// and decodable, then every frame `nextDeliverable` finds after each delivery.
  private mutating func drain<Sink: VP8FrameSink>(from stored: Int, into sink: inout Sink) {
    guard var next = deliverableFrame(containing: stored) else { return }
    while true {
      deliver(first: next.first, last: next.last, isKey: next.isKey, into: &sink)
      guard let following = nextDeliverable() else { return }
      next = following
    }
  }

  /// `nextDeliverable()` right after the packet at `index` was stored, without scanning the
  /// whole buffer (which holds up to `maxBufferedPackets` while a key frame is awaited): only
  /// the frame of that packet can have become decodable. Before it, nothing was (the last
  /// drain ended when `nextDeliverable` found nothing; trimming and `detectLoss` never make a
  /// frame decodable); a frame's completeness depends on its own packets alone, which a packet
  /// of another frame can only break; and whether a frame follows the last delivered one
  /// changes only with a delivery.
  private func deliverableFrame(containing index: Int) -> (first: Int, last: Int, isKey: Bool)? {
    // Back to the frame's first packet, through neighbours of the same timestamp.
    var start = index
    while !packets[start].startsFrame {
      guard start > 0, packets[start - 1].sequence == packets[start].sequence - 1,
        packets[start - 1].timestamp == packets[start].timestamp
      else { return nil }
      start -= 1
    }
    guard let last = completeFrame(startingAt: start) else { return nil }
    let isKey = packets[start].data.first.map { $0 & 0x01 == 0 } ?? false
    let inOrder =
      !isWaitingForKeyFrame
      && follows(
        first: packets[start].sequence, pictureID: packets[start].pictureID,
        modulus: packets[start].pictureIDModulus)
    return isKey || inOrder ? (start, last, isKey) : nil
  }

  /// The complete frame with the lowest first sequence number that may be decoded now (indices
  /// of its first and last packets): a key frame, or the frame that follows the last delivered
  /// one. The buffer is in order, so that is the first such frame found.
  private func nextDeliverable() -> (first: Int, last: Int, isKey: Bool)? {
    var index = 0
    while index < packets.count {
      if packets[index].startsFrame, let last = completeFrame(startingAt: index) {
        let isKey = packets[index].data.first.map { $0 & 0x01 == 0 } ?? false
        let inOrder =
          !isWaitingForKeyFrame
          && follows(
            first: packets[index].sequence, pictureID: packets[index].pictureID,
            modulus: packets[index].pictureIDModulus)
        if isKey || inOrder { return (index, last, isKey) }
      }
      index += 1
    }
    return nil
  }

  private mutating func deliver<Sink: VP8FrameSink>(
    first: Int, last: Int, isKey: Bool, into sink: inout Sink
  ) {
    let pictureID = packets[first].pictureID
    let lastSequence = packets[last].sequence
    let frame = DeliveredFrame(
      isKeyFrame: isKey, timestamp: packets[first].timestamp, pictureID: pictureID,
      firstSequenceNumber: UInt16(truncatingIfNeeded: packets[first].sequence),
      lastSequenceNumber: UInt16(truncatingIfNeeded: lastSequence))
    if first == last {
      // One packet: its own bytes, no copy (the slice taken first: read in place inside the
      // closure, the whole stored packet was copied).
      let data = packets[first].data
      data.withUnsafeBufferPointer { sink.deliver(frame, data: $0) }
    } else {
      // Joined in a buffer kept from frame to frame (grown, zero-filled, only for a larger
      // frame than any before): no new array per frame, and plain copies of the parts.
      var buffer: [UInt8] = []
      swap(&buffer, &joined)
      packets.withUnsafeBufferPointer { stored in
        var size = 0
        for index in first...last { size += stored[index].data.count }
        if buffer.count < size {
          buffer = [UInt8](repeating: 0, count: max(size, buffer.count * 2))
        }
        buffer.withUnsafeMutableBufferPointer { buffer in
          var offset = 0
          for index in first...last {
            // Within the buffer: the parts add up to `size`, at most its count.
            stored[index].data.withUnsafeBufferPointer { part in
              let end = offset + part.count
              _ = UnsafeMutableBufferPointer(rebasing: buffer[offset..<end]).update(
                fromContentsOf: part)
              offset = end
            }
          }
          sink.deliver(frame, data: UnsafeBufferPointer(rebasing: buffer[0..<offset]))
        }
      }
      swap(&buffer, &joined)
    }
    // Everything up to the frame's end is now either in it or obsolete.
    var skippedFrames = 0
    for index in 0..<first where packets[index].startsFrame { skippedFrames += 1 }
    discardedFrames += skippedFrames
    if last + 1 == packets.count {
      // Usually the whole buffer (a few packets): emptied from the end, keeping its storage
      // for the next frame's packets, without `removeAll(keepingCapacity:)`'s generic
      // `replaceSubrange`.
      while !packets.isEmpty { packets.removeLast() }
    } else {
      packets.removeFirst(last + 1)
    }
    lastDelivered = lastSequence
    lastPictureID = pictureID
    if isKey {
      isWaitingForKeyFrame = false
      requestedAt = nil
      waitingSince = nil
    }
  }

  /// Whether a key frame should be asked for now (see `requestKeyFrame`).
  private mutating func detectLoss() -> Bool {
    guard let highest else { return false }
    if !isWaitingForKeyFrame, let lastDelivered {
      // The oldest sequence number still missing after the last delivered frame.
      // Every buffered packet comes after `lastDelivered`, in order: the present ones from
      // `lastDelivered + 1` on are the first few.
      var missing = lastDelivered + 1
      var index = 0
      while index < packets.count, packets[index].sequence == missing, missing < highest {
        missing += 1
        index += 1
      }
      let isPresent = index < packets.count && packets[index].sequence == missing
      if !isPresent, highest - missing > Int64(reorderWindow) {
        isWaitingForKeyFrame = true
        waitingSince = missing
        return requestKeyFrame()
      }
      return false
    }
    guard isWaitingForKeyFrame else { return false }
    let since = waitingSince ?? highest
    waitingSince = since
    // No whole key frame within the reorder window (at the start, or the one asked for was hit by
    // loss too): ask (again), at most once per two windows.
    return highest - since > Int64(reorderWindow) && requestKeyFrame()
  }

  /// Forgets the old numbering: what is buffered, what was delivered; waits for a key frame
  /// (the counters stay).
  /// Starts over for a new source taking over the stream (a new SSRC after the old one fell
  /// silent): the buffered packets and the numbering are forgotten, so the new source's packets
  /// are never taken for late ones of the old, whatever their sequence numbers, and nothing is
  /// delivered before its first key frame. The counters stay.
  public mutating func restart() {
    restartNumbering()
  }

  private mutating func restartNumbering() {
    packets.removeAll()
    sequenceNumbers.reset()
    lastDelivered = nil
    lastPictureID = nil
    requestedAt = nil
    waitingSince = nil
    renumberingCandidate = nil
    isWaitingForKeyFrame = true
  }

  /// Whether to ask for a key frame now: not when one was asked for within the last two
  /// windows.
  private mutating func requestKeyFrame() -> Bool {
    if let requestedAt, let highest, highest - requestedAt <= Int64(reorderWindow) * 2 {
      return false
    }
    requestedAt = highest
    return true
  }

  /// Drops the packets more than `maxBufferedPackets` behind the highest; returns how many.
  private mutating func trimBuffer() -> Int {
    guard packets.count > maxBufferedPackets, let highest else { return 0 }
    let limit = highest - Int64(maxBufferedPackets)
    let count = firstIndex(notBelow: limit + 1)
    packets.removeFirst(count)
    return count
  }
}

extension VP8FrameAssembler {
  /// A frame `insert(_:into:)` delivers, apart from its bytes.
  struct DeliveredFrame: Equatable {
    /// From the P bit of its first byte.
    var isKeyFrame: Bool
    /// 90 kHz RTP timestamp.
    var timestamp: UInt32
    /// PictureID from the descriptor of its first packet, if present.
    var pictureID: UInt16?
    /// Sequence number of its first packet.
    var firstSequenceNumber: UInt16
    /// Sequence number of its marker packet.
    var lastSequenceNumber: UInt16
  }

  /// What `insert(_:into:)` returns besides the frames (see `Output`).
  struct InsertStatus: Equatable {
    /// Ask the sender for a key frame now.
    var needsKeyFrame = false
    /// The packet was rejected as malformed.
    var dropped: VP8PayloadError?
  }

  /// Collects delivered frames into an `Output`, each with its bytes in a new array.
  private struct OutputSink: VP8FrameSink {
    var output = Output()

    mutating func deliver(_ frame: DeliveredFrame, data: UnsafeBufferPointer<UInt8>) {
      output.frames.append(
        Frame(
          frame: EncodedVideoFrame(
            data: Array(data), isKeyFrame: frame.isKeyFrame, timestamp: frame.timestamp),
          pictureID: frame.pictureID, firstSequenceNumber: frame.firstSequenceNumber,
          lastSequenceNumber: frame.lastSequenceNumber))
    }
  }
}

/// Takes the frames `VP8FrameAssembler.insert(_:into:)` delivers, one call per frame in
/// decoding order.
protocol VP8FrameSink {
  /// A complete, decodable frame; `data` (its VP8 bytes, never empty) is valid during the call
  /// only.
  mutating func deliver(_ frame: VP8FrameAssembler.DeliveredFrame, data: UnsafeBufferPointer<UInt8>)
}
