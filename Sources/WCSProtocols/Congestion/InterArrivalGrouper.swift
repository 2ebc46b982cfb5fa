/// Groups packets sent within one burst (draft-ietf-rmcat-gcc-02 §5.2: 5 ms) and yields the
/// send-time / arrival-time deltas between consecutive complete groups.
///
/// Packets must be fed in arrival order. A packet sent before the current group began (reordered
/// on the path) is ignored, as the draft and libwebrtc do.
public struct InterArrivalGrouper: Sendable {
  /// Deltas between two consecutive packet groups; times in microseconds, size in bytes.
  public struct Deltas: Sendable, Equatable {
    /// Send time of the last packet of this group minus that of the previous group.
    public var sendDelta: Int64
    /// Arrival time of the last packet of this group minus that of the previous group.
    public var arrivalDelta: Int64
    /// Bytes in this group minus bytes in the previous group.
    public var sizeDelta: Int
    /// Arrival time of the last packet of this group.
    public var arrivalTime: Int64

    /// Creates deltas (µs, bytes), e.g. to drive `TrendlineEstimator` directly.
    public init(sendDelta: Int64, arrivalDelta: Int64, sizeDelta: Int, arrivalTime: Int64) {
      self.sendDelta = sendDelta
      self.arrivalDelta = arrivalDelta
      self.sizeDelta = sizeDelta
      self.arrivalTime = arrivalTime
    }
  }

  private struct Group {
    var firstSendTime: Int64
    var lastSendTime: Int64
    var firstArrivalTime: Int64
    var lastArrivalTime: Int64
    var size: Int
  }

  /// Burst length that defines a group, microseconds.
  public let groupLength: Int64
  private var current: Group?
  private var previous: Group?

  /// Creates a grouper; `groupLength` in microseconds (default 5 ms).
  public init(groupLength: Int64 = 5_000) { self.groupLength = groupLength }

  /// Adds a packet (times in microseconds); returns the deltas when it closes a group that has
  /// a predecessor.
  public mutating func add(sendTime: Int64, arrivalTime: Int64, size: Int) -> Deltas? {
    guard var group = current else {
      current = Group(
        firstSendTime: sendTime, lastSendTime: sendTime, firstArrivalTime: arrivalTime,
        lastArrivalTime: arrivalTime, size: size)
      return nil
    }
    if sendTime < group.firstSendTime { return nil }
    if belongsToGroup(group, sendTime: sendTime, arrivalTime: arrivalTime) {
      group.lastSendTime = max(group.lastSendTime, sendTime)
      group.lastArrivalTime = max(group.lastArrivalTime, arrivalTime)
      group.size += size
      current = group
      return nil
    }
    var deltas: Deltas?
    if let previous {
      let sendDelta = group.lastSendTime - previous.lastSendTime
      let arrivalDelta = group.lastArrivalTime - previous.lastArrivalTime
      if arrivalDelta >= 0 {
        deltas = Deltas(
          sendDelta: sendDelta, arrivalDelta: arrivalDelta, sizeDelta: group.size - previous.size,
          arrivalTime: group.lastArrivalTime)
      }
    }
    previous = group
    current = Group(
      firstSendTime: sendTime, lastSendTime: sendTime, firstArrivalTime: arrivalTime,
      lastArrivalTime: arrivalTime, size: size)
    return deltas
  }

  /// Forgets all groups (e.g. after a long gap in feedback).
  public mutating func reset() {
    current = nil
    previous = nil
  }

  private func belongsToGroup(_ group: Group, sendTime: Int64, arrivalTime: Int64) -> Bool {
    if sendTime - group.firstSendTime <= groupLength { return true }
    // A burst the network delivered back to back belongs to the same group (libwebrtc: arrival
    // within 5 ms and arriving "early" relative to its send spacing).
    let arrivalGap = arrivalTime - group.lastArrivalTime
    let propagationDelta = arrivalGap - (sendTime - group.lastSendTime)
    return propagationDelta < 0 && arrivalGap <= groupLength
      && arrivalTime - group.firstArrivalTime < 100_000
  }
}
