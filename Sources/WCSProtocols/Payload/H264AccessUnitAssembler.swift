import WCSCodecs

/// Rebuilds H.264 access units from RTP packets (RFC 6184) and hands on only complete ones a
/// decoder can use.
///
/// Packets are taken in sequence order: one that leaves a gap waits, with those after it, until
/// the gap fills (a late retransmission) or `reorderWindow` newer packets arrived, when the
/// missing one counts as lost — as `VP8FrameAssembler` waits — or until a whole IDR access unit
/// after the gap is buffered, which is delivered at once (what came before it is then given up).
/// The jitter buffer already releases packets in order, so the window covers retransmissions
/// that arrive after it let a gap through. An access unit is the run of packets with one
/// timestamp; it is complete when its first packet follows the packet
/// before it without a gap and it ends at its marker packet, or where the next timestamp
/// starts right after it (a lost marker). It is delivered when no packet of it was
/// lost, every NAL type and length checks out (`H264Depacketizer`), each slice's PPS and that
/// PPS's SPS were received (in it or before), and no SPS announces a picture over
/// `pictureLimit`. Anything else is dropped and counted, and the receiver is told to ask for a
/// key frame (PLI, RFC 4585 §6.3.1); after a drop, non-IDR access units are discarded until an
/// IDR arrives. It starts out waiting for an IDR.
///
/// Sans-I/O value type: feed packets, read the output. Not for concurrent use.
public struct H264AccessUnitAssembler: Sendable {
  /// One received RTP packet: sequence number, timestamp, marker and payload (here an RFC
  /// 6184 §5.2 payload), the same shape as VP8's.
  public typealias Packet = VP8FrameAssembler.Packet

  /// What one `insert` produced.
  public struct Output: Sendable, Equatable {
    /// Access units to decode, in order: Annex B byte streams (4-byte start codes),
    /// `isKeyFrame` when they hold an IDR.
    public var accessUnits: [EncodedVideoFrame] = []
    /// True when the receiver should ask the sender for a key frame now.
    public var needsKeyFrame = false
    /// Why a packet or access unit was refused, when one was.
    public var dropped: H264PayloadError?
  }

  /// The largest picture an SPS may announce.
  public let pictureLimit: H264PictureLimit
  /// Largest access unit in bytes (default 4 MiB) and in NAL units (default 1024).
  public let maxAccessUnitSize: Int
  /// Largest number of NAL units in one access unit.
  public let maxNALUnits: Int
  /// Packets a missing sequence number may lag behind the newest before it counts as lost (0:
  /// at once, the next packet after a gap ends the wait).
  public let reorderWindow: Int
  /// Packets refused by the depacketizer (bad type, length, fragment).
  public private(set) var droppedPackets = 0
  /// Access units dropped: a packet of them lost or refused, a parameter set missing, an SPS
  /// over the limit, over the size bounds, or non-IDR while waiting for an IDR.
  public private(set) var droppedAccessUnits = 0
  /// Packets older than the last one taken (late or duplicate), ignored.
  public private(set) var latePackets = 0
  /// True until the next IDR is delivered (at the start and after a drop).
  public private(set) var isWaitingForKeyFrame = true

  private var sequenceNumbers = RTPExtendedSequenceNumber()
  private var lastSequence: Int64?
  /// The access unit being built.
  private var timestamp: UInt32?
  private var units: [[UInt8]] = []
  private var size = 0
  private var broken: H264PayloadError?
  /// The FU-A being joined: its NAL header and bytes so far.
  private var fragment: [UInt8]?
  /// SPS ids received; PPS id → its SPS id.
  private var spsIDs: Set<Int> = []
  private var ppsSPS: [Int: Int] = [:]
  private var lastRequest: Int64?
  /// Packets after a gap, waiting for it to fill, in ascending extended sequence number, each
  /// once; at most `reorderWindow` + 1 (past that the gap is given up).
  private var pending: [(sequence: Int64, packet: Packet)] = []

  /// Packets between two key frame requests while none arrives (one per second at 30 fps
  /// with a few packets per picture).
  private static let requestInterval: Int64 = 100

  /// An assembler.
  /// - Parameters:
  ///   - pictureLimit: default `H264PictureLimit.default`.
  ///   - maxAccessUnitSize: bytes, at least 64 KiB (default 4 MiB).
  ///   - maxNALUnits: at least 16 (default 1024).
  ///   - reorderWindow: packets, 0 to 4096 (default 0: no wait; receivers use 64 as VP8's).
  public init(
    pictureLimit: H264PictureLimit = .default, maxAccessUnitSize: Int = 4 << 20,
    maxNALUnits: Int = 1024, reorderWindow: Int = 0
  ) {
    self.pictureLimit = pictureLimit
    self.maxAccessUnitSize = max(64 << 10, maxAccessUnitSize)
    self.maxNALUnits = max(16, maxNALUnits)
    self.reorderWindow = min(max(0, reorderWindow), 4096)
  }

  /// Packets waiting after a gap for it to fill.
  public var waitingPackets: Int { pending.count }

  /// Takes one packet and returns the access units that became complete.
  public mutating func insert(_ packet: Packet) -> Output {
    var output = Output()
    let sequence = sequenceNumbers.extended(packet.sequenceNumber)
    if let lastSequence, sequence <= lastSequence {
      latePackets += 1
      return output
    }
    let index = pendingIndex(notBelow: sequence)
    if index < pending.count, pending[index].sequence == sequence {
      latePackets += 1
      return output
    }
    sequenceNumbers.record(sequence)
    if pending.isEmpty, lastSequence.map({ sequence == $0 + 1 }) ?? true {
      assemble(packet, sequence: sequence, into: &output)
    } else {
      pending.insert((sequence, packet), at: index)
      release(into: &output, completedBy: packet.marker ? index : nil)
    }
    if output.dropped != nil
      || (isWaitingForKeyFrame
        && !output.accessUnits.contains {
          $0.isKeyFrame
        })
    {
      output.needsKeyFrame = requestKeyFrame(
        at: lastSequence ?? sequence, now: output.dropped != nil)
    }
    return output
  }

  /// The index of the first waiting packet numbered `sequence` or later (`pending.count`
  /// when none is).
  private func pendingIndex(notBelow sequence: Int64) -> Int {
    pending.firstIndex(notBelow: sequence) { $0.sequence }
  }

  /// Hands the waiting packets on in order while they follow the last one taken, giving up a
  /// gap once `reorderWindow` newer packets arrived, or every gap before a whole IDR access
  /// unit that the marker packet at `completedBy` ended.
  private mutating func release(into output: inout Output, completedBy marker: Int?) {
    var through = marker.flatMap(keyFrameEnd(at:)) ?? -1
    while let first = pending.first {
      if through < 0, let lastSequence, first.sequence != lastSequence + 1 {
        guard let highest = sequenceNumbers.highest,
          highest - (lastSequence + 1) > Int64(reorderWindow)
        else { return }
      }
      let next = pending.removeFirst()
      through -= 1
      assemble(next.packet, sequence: next.sequence, into: &output)
    }
  }

  /// When the waiting marker packet at `end` closes a whole access unit holding an IDR, with
  /// the marker packet before it waiting too (so the unit's first packet is known): `end`.
  private func keyFrameEnd(at end: Int) -> Int? {
    let timestamp = pending[end].packet.timestamp
    var start = end
    var holdsIDR = false
    while true {
      if H264Depacketizer.startsKeyFrame(pending[start].packet.payload[...]) { holdsIDR = true }
      guard start > 0, pending[start - 1].sequence == pending[start].sequence - 1 else {
        return nil
      }
      if pending[start - 1].packet.timestamp != timestamp {
        return holdsIDR && pending[start - 1].packet.marker ? end : nil
      }
      start -= 1
    }
  }

  /// Takes the next packet in sequence order (`sequence` after the last one taken, or past a
  /// gap given up).
  private mutating func assemble(_ packet: Packet, sequence: Int64, into output: inout Output) {
    let gap = lastSequence.map { sequence != $0 + 1 } ?? false
    lastSequence = sequence
    if timestamp != packet.timestamp {
      // A new access unit: the open one is complete if nothing was lost in between.
      if timestamp != nil {
        if gap { broken = broken ?? .lostPacket }
        finish(into: &output)
      }
      timestamp = packet.timestamp
      // A lost packet just before it may have been its first (or a whole access unit it
      // refers to): it starts complete only right after the packet before it.
      if gap { broken = .lostPacket }
    } else if gap {
      broken = broken ?? .lostPacket
    }
    if broken == nil { take(packet.payload, output: &output) }
    if packet.marker { finish(into: &output) }
  }

  private mutating func requestKeyFrame(at sequence: Int64, now: Bool) -> Bool {
    if !now, let lastRequest, sequence - lastRequest < Self.requestInterval { return false }
    lastRequest = sequence
    return true
  }

  private mutating func take(_ payload: [UInt8], output: inout Output) {
    let parsed: H264PayloadPacket
    do {
      parsed = try H264Depacketizer.parse(payload[...])
    } catch {
      droppedPackets += 1
      broken = error
      return
    }
    switch parsed {
    case .nalUnits(let found):
      guard fragment == nil else {
        broken = .badFragment
        return
      }
      for unit in found { append(Array(unit)) }
    case .fragment(let header, let isStart, let isEnd, let data):
      if isStart {
        guard fragment == nil else {
          broken = .badFragment
          return
        }
        fragment = [header]
      }
      guard var joined = fragment else {
        droppedPackets += 1
        broken = .fragmentWithoutStart
        return
      }
      guard joined[0] == header else {
        broken = .badFragment
        return
      }
      fragment = nil
      guard joined.count + data.count <= maxAccessUnitSize - size else {
        broken = .accessUnitTooLarge
        return
      }
      joined += data
      if isEnd { append(joined) } else { fragment = joined }
    }
  }

  private mutating func append(_ received: [UInt8]) {
    // Checked and written as the decoder will read it: a unit's trailing zeros go with the
    // start code after it in the byte stream (an SPS that parsed only thanks to them did not
    // parse there).
    let unit = received.last == 0 ? Array(H264AnnexB.withoutTrailingZeros(received[...])) : received
    guard !unit.isEmpty else {
      broken = .emptyPayload
      return
    }
    guard units.count < maxNALUnits, size + unit.count + 4 <= maxAccessUnitSize else {
      broken = .accessUnitTooLarge
      return
    }
    guard !Self.holdsStartCode(unit) else {
      broken = .startCodeInNALUnit
      return
    }
    units.append(unit)
    size += unit.count + 4
  }

  /// Whether `unit` would not survive the Annex B stream whole (H.264 §B.2): a 0x000001 inside
  /// it reads as a start code there, and what follows as other NAL units, never checked here.
  /// Other sequences emulation prevention avoids (0x000000, 0x000002, a trailing 0x00 —
  /// §7.4.1) do not split a unit, and real encoders' streams carry some (cabac_zero_words), so
  /// they pass. Whoever turns NAL units from elsewhere (AVC length-prefixed, ISO/IEC 14496-15)
  /// into Annex B needs the same test.
  /// - Parameter unit: one NAL unit without a start code, header byte first.
  public static func holdsStartCode<Unit: Sequence<UInt8>>(_ unit: Unit) -> Bool {
    var zeros = 0
    for byte in unit {
      if zeros >= 2 && byte == 1 { return true }
      zeros = byte == 0 ? zeros + 1 : 0
    }
    return false
  }

  /// Closes the open access unit: delivers it or drops it.
  private mutating func finish(into output: inout Output) {
    defer {
      timestamp = nil
      units = []
      size = 0
      broken = nil
      fragment = nil
    }
    guard timestamp != nil, !(units.isEmpty && broken == nil) else { return }
    if fragment != nil { broken = broken ?? .lostPacket }
    if broken == nil { broken = check() }
    if let reason = broken {
      drop(reason, into: &output)
      return
    }
    let isKey = units.contains { H264NALUnitType.of($0[0]) == H264NALUnitType.idrSlice }
    let hasSlice =
      isKey || units.contains { H264NALUnitType.of($0[0]) == H264NALUnitType.nonIDRSlice }
    guard hasSlice else {
      // Parameter sets or SEI alone: nothing to decode, already recorded by `check`.
      return
    }
    if isWaitingForKeyFrame, !isKey {
      droppedAccessUnits += 1
      return
    }
    isWaitingForKeyFrame = false
    output.accessUnits.append(
      EncodedVideoFrame(
        data: H264AnnexB.stream(units), isKeyFrame: isKey, timestamp: timestamp ?? 0))
  }

  private mutating func drop(_ reason: H264PayloadError, into output: inout Output) {
    droppedAccessUnits += 1
    isWaitingForKeyFrame = true
    output.dropped = reason
  }

  /// The parameter set rules for the units of the open access unit; records its SPSs and PPSs.
  private mutating func check() -> H264PayloadError? {
    for unit in units {
      switch H264NALUnitType.of(unit[0]) {
      case H264NALUnitType.sps:
        guard let sps = try? H264SequenceParameterSet(nalUnit: unit),
          pictureLimit.allows((sps.widthInMacroblocks * 16, sps.heightInMacroblocks * 16))
        else { return .pictureTooLarge }
        spsIDs.insert(sps.id)
      case H264NALUnitType.pps:
        var reader = H264BitReader(
          rbsp: H264BitReader.removingEmulationPrevention(unit.dropFirst()))
        guard let id = try? reader.unsignedExpGolomb(max: 255),
          let spsID = try? reader.unsignedExpGolomb(max: 31)
        else { return .missingParameterSet }
        guard spsIDs.contains(spsID) else { return .missingParameterSet }
        ppsSPS[id] = spsID
      case H264NALUnitType.idrSlice, H264NALUnitType.nonIDRSlice:
        // Slice header (§7.3.3): first_mb_in_slice, slice_type, pic_parameter_set_id.
        var reader = H264BitReader(
          rbsp: H264BitReader.removingEmulationPrevention(unit.dropFirst().prefix(24)))
        guard (try? reader.unsignedExpGolomb(max: 1 << 20)) != nil,
          (try? reader.unsignedExpGolomb(max: 9)) != nil,
          let id = try? reader.unsignedExpGolomb(max: 255),
          let spsID = ppsSPS[id], spsIDs.contains(spsID)
        else { return .missingParameterSet }
      default: break
      }
    }
    return nil
  }
}
