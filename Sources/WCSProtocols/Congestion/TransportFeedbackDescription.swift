/// What one transport-wide congestion control feedback packet says, before RTCP encoding
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1: RTPFB, FMT=15).
///
/// The RTCP writer turns `packetStatuses` into run-length / status-vector chunks; a
/// `.received` delta in 0...255 is a "small delta" (1 byte), anything else a "large or negative
/// delta" (2 bytes, signed).
public struct TransportFeedbackDescription: Sendable, Equatable {
  /// Receive status of one packet, in sequence order starting at `baseSequenceNumber`.
  public enum PacketStatus: Sendable, Equatable {
    /// The packet had not arrived when the feedback was built.
    case notReceived
    /// Arrived; `deltaTicks` (units of 250 µs) since the previous received packet in this
    /// feedback, or since `referenceTime` for the first one. Negative when reordered.
    case received(deltaTicks: Int16)
  }

  /// Microseconds per delta tick (§3.1.5: 250 µs).
  public static let deltaTickMicroseconds: Int64 = 250
  /// Microseconds per reference-time unit (§3.1: 64 ms).
  public static let referenceTimeUnitMicroseconds: Int64 = 64_000

  /// Transport sequence number of the first packet described.
  public var baseSequenceNumber: UInt16
  /// Arrival-time base, 24-bit value in units of 64 ms (`& 0xFF_FFFF` of the receiver's clock).
  public var referenceTime: UInt32
  /// Feedback packet count, incremented (mod 256) for every feedback built.
  public var feedbackPacketCount: UInt8
  /// One status per packet from `baseSequenceNumber` on (`packet status count` = `count`).
  public var packetStatuses: [PacketStatus]

  /// Creates a description from its fields (units as documented on each property).
  public init(
    baseSequenceNumber: UInt16, referenceTime: UInt32, feedbackPacketCount: UInt8,
    packetStatuses: [PacketStatus]
  ) {
    self.baseSequenceNumber = baseSequenceNumber
    self.referenceTime = referenceTime & 0xFF_FFFF
    self.feedbackPacketCount = feedbackPacketCount
    self.packetStatuses = packetStatuses
  }

  /// The per-packet view the send side consumes: arrival times rebuilt as `referenceTime ×
  /// 64 ms + Σ deltas` from the receiver clock's origin (only differences matter to the
  /// estimator; the 24-bit reference time wraps after about 12.4 days).
  public func packetFeedbacks() -> [PacketFeedback] {
    var time = Int64(referenceTime) * Self.referenceTimeUnitMicroseconds
    var sequenceNumber = baseSequenceNumber
    var result: [PacketFeedback] = []
    result.reserveCapacity(packetStatuses.count)
    for status in packetStatuses {
      switch status {
      case .notReceived:
        result.append(PacketFeedback(transportSequenceNumber: sequenceNumber, arrivalTime: nil))
      case .received(let deltaTicks):
        time += Int64(deltaTicks) * Self.deltaTickMicroseconds
        result.append(
          PacketFeedback(
            transportSequenceNumber: sequenceNumber,
            arrivalTime: MediaInstant(nanoseconds: time * 1_000)))
      }
      sequenceNumber &+= 1
    }
    return result
  }
}
