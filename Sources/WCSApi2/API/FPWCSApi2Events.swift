import WCSEngine
import WCSMediaSeam

/// A server event bound to a stream (`FPWCSApi2StreamEvent`, api-surface.md §2.13), from
/// `notifyStreamEvent` (wcs-protocol.md §4.6).
public final class FPWCSApi2StreamEvent: @unchecked Sendable {
  // @unchecked Sendable: immutable after init; `payload` holds JSON-compatible Foundation values.
  /// Wire type (`audioMuted`, `data`, `resize`, ...); compare with
  /// `FPWCSApi2Model.streamEventType(toString:)`.
  public let type: String
  /// The event's payload object (for `data`: the publisher's object); `nil` when absent.
  public let payload: [String: Any]?
  /// Same payload as JSON values (Linux addition).
  public let payloadJSON: JSONValue?
  /// `mediaSessionId` of the receiving stream.
  public let mediaSessionId: String

  init(type: String, payload: JSONValue?, mediaSessionId: String) {
    self.type = type
    self.payloadJSON = payload
    self.payload = payload?.objectValue.map { JSONConversion.foundationObject($0) }
    self.mediaSessionId = mediaSessionId
  }

  /// The typed event kind, or `nil` for types outside `kFPWCSStreamEventType`.
  public var eventType: kFPWCSStreamEventType? { FPWCSApi2Model.streamEventType(from: type) }
}

/// A data message from or about the server app (`FPWCSApi2Data`, api-surface.md §2.13): the
/// `DataStatusEvent` answering `sendData`, or an `OnDataEvent`.
public final class FPWCSApi2Data: @unchecked Sendable {
  // @unchecked Sendable: immutable after init; `payload` holds JSON-compatible Foundation values.
  /// Id correlating `sendData` and its `DataStatusEvent`.
  public let operationId: String?
  /// The object sent by the server app.
  public let payload: [String: Any]?
  /// `"ACCEPTED"` or `"FAILED"` for `DataStatusEvent`.
  public let status: String?
  /// Reason text.
  public let info: String?
  /// `payload` as received, for the room API (FPWCSApi2Room.swift).
  let payloadJSON: JSONValue?

  init(operationId: String?, payload: JSONValue?, status: String?, info: String?) {
    self.operationId = operationId
    self.payloadJSON = payload
    self.payload = payload?.objectValue.map { JSONConversion.foundationObject($0) }
    self.status = status
    self.info = info
  }
}

/// Accepted/rejected handlers of `sendData(_:handler:)` (`FPWCSApi2DataHandler`).
public final class FPWCSApi2DataHandler: @unchecked Sendable {
  // @unchecked Sendable: set by the app before use; read on the session's callback queue only.
  /// Called when the server app accepted the data.
  public var onAccepted: ((FPWCSApi2Session?, FPWCSApi2Data?) -> Void)?
  /// Called when it was rejected or the session ended first.
  public var onRejected: ((FPWCSApi2Session?, FPWCSApi2Data?) -> Void)?

  /// Empty handler.
  public init() {}
}

/// Mute state of the remote publisher's audio or video as known when playback started
/// (`getAudioState()`/`getVideoState()`; iOS class name UNCONFIRMED).
public final class FPWCSApi2MediaState: Sendable {
  /// `true` when muted.
  public let muted: Bool

  init(muted: Bool) { self.muted = muted }
}

/// Statistics of a stream's WebRTC connection (`getStats`; iOS class name UNCONFIRMED).
public final class FPWCSApi2StreamStats: Sendable {
  /// Current video bitrate in bits per second (sent when publishing, received when playing).
  public let currentVideoBitrate: Int
  /// Estimated available send bandwidth in bits per second (0 = unknown).
  public let availableOutgoingBitrate: Int
  /// Raw counters of the connection (Linux addition).
  public let connection: MediaConnectionStats
  /// The native engine's codec and RTCP counters (NACK, PLI, key frames, retransmissions;
  /// Linux addition), `nil` with another media engine.
  public let detailed: NativeMediaConnection.DetailedStatistics?
  /// How long a played stream holds media before playing it (Linux addition), `nil` when
  /// publishing or with another media engine.
  public let playoutDelay: FPWCSApi2PlayoutDelay?
  /// What ICE chose (Linux addition): the policy, the selected candidate pair's local and
  /// remote candidates (type, protocol, relay protocol, address) and the ICE servers left out;
  /// `nil` with another media engine or before the connection made its offer.
  public let ice: MediaICEStats?

  init(
    _ stats: MediaConnectionStats, detailed: NativeMediaConnection.DetailedStatistics? = nil,
    ice: MediaICEStats? = nil
  ) {
    self.currentVideoBitrate = stats.currentVideoBitrate
    self.availableOutgoingBitrate = stats.availableOutgoingBitrate
    self.connection = stats
    self.detailed = detailed
    self.playoutDelay = detailed.flatMap(FPWCSApi2PlayoutDelay.init)
    self.ice = ice
  }
}
