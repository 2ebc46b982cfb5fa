/// Groups packets sent within one burst (draft-ietf-rmcat-gcc-02 §5.2: 5 ms) and yields the
/// send-time / arrival-time deltas between consecutive complete groups.
///
/// Packets must be fed in arrival order. A packet sent before the current group began (reordered
/// on the path) is ignored, as the draft and libwebrtc do.
public struct InterArrivalGrouper: Sendable {
  /// Deltas between two consecutive packet groups; size in bytes.
  public struct Deltas: Sendable, Equatable {
    /// Send time of the last packet of this group minus that of the previous group.
    public var sendDelta: MediaDuration
    /// Arrival time of the last packet of this group minus that of the previous group.
    public var arrivalDelta: MediaDuration
    /// Bytes in this group minus bytes in the previous group.
    public var sizeDelta: Int
    /// Arrival time of the last packet of this group.
    public var arrivalTime: MediaInstant

    /// Creates deltas, e.g. to drive `TrendlineEstimator` directly.
    public init(
      sendDelta: MediaDuration, arrivalDelta: MediaDuration, sizeDelta: Int,
      arrivalTime: MediaInstant
    ) {
      self.sendDelta = sendDelta
      self.arrivalDelta = arrivalDelta
      self.sizeDelta = sizeDelta
      self.arrivalTime = arrivalTime
    }
  }

  private struct Group {
    var firstSendTime: MediaInstant
    var lastSendTime: MediaInstant
    var firstArrivalTime: MediaInstant
    var lastArrivalTime: MediaInstant
    var size: Int
  }

  /// Burst length that defines a group.
  public let groupLength: MediaDuration
  private var current: Group?
  private var previous: Group?

  /// Creates a grouper (default 5 ms).
  public init(groupLength: MediaDuration = .milliseconds(5)) { self.groupLength = groupLength }

  /// Adds a packet; returns the deltas when it closes a group that has a predecessor.
  public mutating func add(sendTime: MediaInstant, arrivalTime: MediaInstant, size: Int)
    -> Deltas?
  {
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
      if arrivalDelta >= .zero {
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

  private func belongsToGroup(_ group: Group, sendTime: MediaInstant, arrivalTime: MediaInstant)
    -> Bool
  {
    if sendTime - group.firstSendTime <= groupLength { return true }
    // A burst the network delivered back to back belongs to the same group (libwebrtc: arrival
    // within 5 ms and arriving "early" relative to its send spacing).
    let arrivalGap = arrivalTime - group.lastArrivalTime
    let propagationDelta = arrivalGap - (sendTime - group.lastSendTime)
    return propagationDelta < .zero && arrivalGap <= groupLength
      && arrivalTime - group.firstArrivalTime < .milliseconds(100)
  }
}
