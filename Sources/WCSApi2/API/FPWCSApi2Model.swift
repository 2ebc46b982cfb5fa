/// String helpers of the iOS SDK (`FPWCSApi2Model`, api-surface.md §2.12): enum ⇄ the protocol's
/// upper-case names (`ESTABLISHED`, `PUBLISHING`, `NOT_ENOUGH_BANDWIDTH`) and stream event types
/// ⇄ the wire strings (`audioMuted`, `data`).
public enum FPWCSApi2Model {
  /// `"NEW"`, `"PENDING"`, `"ESTABLISHED"`, `"DISCONNECTED"`, `"FAILED"`, `"REGISTERED"`, `"UNREGISTERED"`.
  public static func sessionStatus(toString status: kFPWCSSessionStatus) -> String {
    switch status {
    case .fpwcsSessionStatusNew: return "NEW"
    case .fpwcsSessionStatusPending: return "PENDING"
    case .fpwcsSessionStatusEstablished: return "ESTABLISHED"
    case .fpwcsSessionStatusDisconnected: return "DISCONNECTED"
    case .fpwcsSessionStatusFailed: return "FAILED"
    case .fpwcsSessionStatusRegistered: return "REGISTERED"
    case .fpwcsSessionStatusUnregistered: return "UNREGISTERED"
    }
  }

  /// The protocol name of a stream status (wcs-protocol.md §5.1), e.g. `"PUBLISHING"`.
  public static func streamStatus(toString status: kFPWCSStreamStatus) -> String {
    switch status {
    case .fpwcsStreamStatusNew: return "NEW"
    case .fpwcsStreamStatusPending: return "PENDING"
    case .fpwcsStreamStatusPublishing: return "PUBLISHING"
    case .fpwcsStreamStatusPlaying: return "PLAYING"
    case .fpwcsStreamStatusPaused: return "PAUSED"
    case .fpwcsStreamStatusUnpublished: return "UNPUBLISHED"
    case .fpwcsStreamStatusStopped: return "STOPPED"
    case .fpwcsStreamStatusFailed: return "FAILED"
    case .fpwcsStreamStatusResize: return "RESIZE"
    case .fpwcsStreamStatusSnaphotComplete: return "SNAPSHOT_COMPLETE"
    case .fpwcsStreamStatusNotEnoughtBandwidth: return "NOT_ENOUGH_BANDWIDTH"
    }
  }

  /// The stream status named by a protocol string (case-insensitive); `nil` for an unknown name.
  public static func streamStatus(from string: String) -> kFPWCSStreamStatus? {
    let upper = string.uppercased()
    return kFPWCSStreamStatus.allCases.first { streamStatus(toString: $0) == upper }
  }

  /// The protocol name of a call status, e.g. `"ESTABLISHED"`.
  public static func callStatus(toString status: kFPWCSCallStatus) -> String {
    switch status {
    case .fpwcsCallStatusNew: return "NEW"
    case .fpwcsCallStatusTrying: return "TRYING"
    case .fpwcsCallStatusRing: return "RING"
    case .fpwcsCallStatusBusy: return "BUSY"
    case .fpwcsCallStatusHold: return "HOLD"
    case .fpwcsCallStatusEstablished: return "ESTABLISHED"
    case .fpwcsCallStatusFailed: return "FAILED"
    case .fpwcsCallStatusFinish: return "FINISH"
    case .fpwcsCallStatusPending: return "PENDING"
    case .fpwcsCallStatusRingMedia: return "RING_MEDIA"
    case .fpwcsCallStatusSessionProgress: return "SESSION_PROGRESS"
    }
  }

  /// The call status named by a protocol string (case-insensitive); `nil` for an unknown name.
  public static func callStatus(from string: String) -> kFPWCSCallStatus? {
    let upper = string.uppercased()
    return kFPWCSCallStatus.allCases.first { callStatus(toString: $0) == upper }
  }

  /// The wire type string of a stream event: `"audioMuted"`, `"audioUnmuted"`, `"videoMuted"`,
  /// `"videoUnmuted"`, `"data"` (compare with `FPWCSApi2StreamEvent.type`).
  public static func streamEventType(toString type: kFPWCSStreamEventType) -> String {
    switch type {
    case .fpwcsStreamEventTypeAudioMuted: return "audioMuted"
    case .fpwcsStreamEventTypeAudioUnmuted: return "audioUnmuted"
    case .fpwcsStreamEventTypeVideoMuted: return "videoMuted"
    case .fpwcsStreamEventTypeVideoUnmuted: return "videoUnmuted"
    case .fpwcsStreamEventTypeData: return "data"
    }
  }

  /// The event type of a wire string (exact match); `nil` for other types (`resize`, ...).
  public static func streamEventType(from string: String) -> kFPWCSStreamEventType? {
    kFPWCSStreamEventType.allCases.first { streamEventType(toString: $0) == string }
  }

  /// The server's `info` text for a status-info code (wcs-protocol.md §5.2); `""` for Unknown
  /// (Linux addition: the iOS helper's selector is UNCONFIRMED).
  public static func streamStatusInfo(toString info: kFPWCSStreamStatusInfo) -> String {
    StreamStatusInfoTable.text(of: info)
  }

  /// The status-info code of a server `info` text, matched loosely (case and spacing ignored,
  /// known rewordings accepted); `.fpwcsStreamStatusInfoUnknown` when not in the table.
  public static func streamStatusInfo(from info: String?) -> kFPWCSStreamStatusInfo {
    StreamStatusInfoTable.code(of: info)
  }
}
