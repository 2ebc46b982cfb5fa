import WCSTransport

/// What a call asks for besides its SDP: the fields of `call`/`answer`
/// (wcs-rooms-and-calls.md §B.3, §B.4).
struct CallRequest: Sendable, Equatable {
  var callee: String
  var visibleName: String?
  var hasAudio: Bool
  var hasVideo: Bool
  var custom: [String: JSONValue]?
  /// `inviteParameters`: extra SIP header fields for the INVITE (string → string).
  var inviteParameters: [String: String]?
  /// Extra SDP lines for the SIP leg (`sipSDP`).
  var sipSDP: [String]?
}

/// The protocol state of one SIP call, owned by `CallTable`; copies go to the app's call object.
struct CallState: Sendable, Equatable {
  /// `callId`: a UUID made by the client (outgoing) or by the server (incoming).
  let id: String
  let incoming: Bool
  var status: kFPWCSCallStatus = .fpwcsCallStatusNew
  /// The remote party for incoming calls, the own SIP login for outgoing ones.
  var caller: String
  var callee: String
  var visibleName: String?
  /// The server's reason text (`info`, e.g. `Normal call clearing`), or a local one.
  var info: String?
  /// The last SIP response code the server reported (`sipStatus`), 0 when none.
  var sipStatus = 0
  var hasAudio = true
  var hasVideo = false
  var request: CallRequest?
  /// `call`/`answer` went out: `hangup` must be sent to the server from now on.
  var requestSent = false
  /// The media connection's offer exists (a server answer may be applied).
  var offerCreated = false
  /// A server answer that arrived before the local offer existed.
  var bufferedAnswer: String?
  /// The server's answer went to the media engine.
  var answerApplied = false
  /// The server's offer for an incoming call (`setRemoteSDP [callId, sdp, false]`).
  var remoteOffer: String?
  /// Transfer status from `notifyTransferEvent` (ACCEPTED, TRYING, COMPLETED, FAILED).
  var transferStatus: String?
  var localAudioMuted = false
  var localVideoMuted = false
}

/// An effect of `CallTable`, carried out by the session in order.
enum CallEffect: Sendable {
  /// Send one message.
  case send(WCSMessage)
  /// A call status callback fires; the state is the call's state afterwards.
  case status(kFPWCSCallStatus, CallState)
  /// State changed without a callback (info, sipStatus, transfer status).
  case updated(CallState)
  /// The server announced an incoming call: create its object and run `onIncomingCallCallback`.
  case incoming(CallState)
  /// Create the call's media connection and its offer (driver calls `offerCreated`).
  case createOffer(callId: String)
  /// Apply the server's SDP answer.
  case applyAnswer(callId: String, sdp: String)
  /// Enable or disable a local track of the call.
  case setTrackEnabled(callId: String, audio: Bool, enabled: Bool)
  /// Close the call's media connection.
  case releaseMedia(callId: String)
  /// The far end pressed DTMF `digits` (`notifyDtmf`): the call's DTMF callback fires.
  case dtmfReceived(callId: String, digits: String, type: kFPWCSCallDTMF)
}
