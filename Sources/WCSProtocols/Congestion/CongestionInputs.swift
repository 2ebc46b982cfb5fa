/// One media packet handed to the network, as the send-side bandwidth estimator needs it.
///
/// Times in this folder are `MediaInstant`s on the caller's monotonic clock (the receiver's
/// clock for feedback arrival times, any origin); the estimators only look at differences.
public struct PacketSent: Sendable, Equatable {
  /// Transport-wide sequence number carried in the RTP header extension
  /// (draft-holmer-rmcat-transport-wide-cc-extensions-01 §2); wraps at 2^16.
  public var transportSequenceNumber: UInt16
  /// When the packet left the pacer.
  public var sendTime: MediaInstant
  /// Bytes on the wire counted for rate purposes (RTP packet incl. header; the driver may add
  /// SRTP/UDP/IP overhead).
  public var size: Int
  /// The probe cluster the pacer sent this packet for (`PacerRelease.probeClusterID`), if any.
  public var probeClusterID: Int?

  /// Creates a sent-packet record; `size` in bytes.
  public init(
    transportSequenceNumber: UInt16, sendTime: MediaInstant, size: Int, probeClusterID: Int? = nil
  ) {
    self.transportSequenceNumber = transportSequenceNumber
    self.sendTime = sendTime
    self.size = size
    self.probeClusterID = probeClusterID
  }
}

/// The fate of one packet as reported in a transport-wide congestion control feedback
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1).
public struct PacketFeedback: Sendable, Equatable {
  /// Transport-wide sequence number of the reported packet; wraps at 2^16.
  public var transportSequenceNumber: UInt16
  /// Arrival time on the receiver's clock (reference time plus deltas), or `nil` when the
  /// feedback reports the packet as not received.
  public var arrivalTime: MediaInstant?

  /// Creates a feedback entry; `arrivalTime` `nil` = lost.
  public init(transportSequenceNumber: UInt16, arrivalTime: MediaInstant?) {
    self.transportSequenceNumber = transportSequenceNumber
    self.arrivalTime = arrivalTime
  }
}

/// Receiver Estimated Maximum Bitrate as announced by the remote side
/// (draft-alvestrand-rmcat-remb-03 §2); the estimator treats it as an upper cap.
public struct REMBUpdate: Sendable, Equatable {
  /// Announced maximum total bitrate, bits per second.
  public var bitrate: Int

  /// Creates a REMB input; `bitrate` in bits per second.
  public init(bitrate: Int) { self.bitrate = bitrate }
}

extension MediaDuration {
  /// The duration in (fractional) microseconds: the unit the GCC formulas here are written in
  /// (libwebrtc's), exact for whole microseconds, so the figures are those of integer
  /// microsecond arithmetic.
  var microsecondsValue: Double { Double(nanoseconds) / 1_000 }
}
