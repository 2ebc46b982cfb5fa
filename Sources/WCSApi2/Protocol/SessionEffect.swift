import Foundation
import WCSTransport

/// An effect the session core asks its driver to carry out, in order.
enum SessionEffect: Sendable {
  /// Open the signalling transport (the driver calls `transportOpened()` when it is up).
  case openTransport
  /// Send one message.
  case send(WCSMessage)
  /// Close the signalling transport (code 1000).
  case closeTransport
  /// The session status changed: fire its callback.
  case sessionStatus(kFPWCSSessionStatus)
  /// A stream status callback fires (a real change or an event-like status such as RESIZE);
  /// the state is the stream's state afterwards.
  case streamStatus(kFPWCSStreamStatus, StreamState)
  /// Stream state changed without a callback (info, mute state, record name).
  case streamUpdated(StreamState)
  /// Ask the stream's media connection for the offer (driver calls `offerCreated`).
  case createOffer(streamId: String)
  /// Apply the server's SDP answer (driver calls `answerApplied` on failure).
  case applyAnswer(streamId: String, sdp: String)
  /// Enable or disable a local track.
  case setTrackEnabled(streamId: String, audio: Bool, enabled: Bool)
  /// Close the stream's media connection and forget it.
  case releaseMedia(streamId: String)
  /// A `notifyStreamEvent` for a stream.
  case streamEvent(streamId: String, type: String, payload: JSONValue?)
  /// The answer to an `availableStream` check.
  case availability(checkId: String, available: Bool, info: String?)
  /// The answer to a session `sendData` (`DataStatusEvent`), or its rejection on disconnect.
  case dataStatus(
    operationId: String, accepted: Bool, payload: JSONValue?, status: String?, info: String?)
  /// App data pushed by the server (`OnDataEvent`).
  case appData(operationId: String?, payload: JSONValue?)
  /// The server's view of a stream's video bitrate (`inbound/outboundVideoRate`), bits per second.
  case serverVideoRate(streamId: String, bitrate: Int)
  /// A SIP call effect (SessionCore+Calls.swift).
  case call(CallEffect)
  /// A frame or message was skipped (not JSON, wrong shape, unknown id): for diagnostics only.
  case skipped(String)
}
