import WCSEventLoop
import WCSProtocols

/// The overall state of a `PeerConnection`, named as WebRTC's `RTCPeerConnectionState`.
public enum PeerConnectionState: Equatable, Sendable {
  /// Created; no remote description yet or ICE not started.
  case new
  /// ICE checks or the DTLS handshake are running.
  case connecting
  /// ICE selected a pair and DTLS verified the peer: SRTP keys are in place, media flows.
  case connected
  /// Consent checks stopped getting answers (RFC 7675), or the peer closed DTLS
  /// (close_notify); no media is delivered meanwhile.
  case disconnected
  /// ICE failed, DTLS failed (e.g. fingerprint mismatch) or keys could not be set; final.
  case failed(PeerConnectionError)
  /// `close()` was called; final.
  case closed

  /// `true` for `.failed` and `.closed`.
  public var isFinal: Bool {
    switch self {
    case .failed, .closed: return true
    case .new, .connecting, .connected, .disconnected: return false
    }
  }
}

/// Why a `PeerConnection` call failed or the connection stopped.
public enum PeerConnectionError: Error, Equatable, Sendable {
  /// The call does not fit the current signalling step (`reason` says which).
  case invalidState(reason: String)
  /// No UDP socket could be bound (every host address failed); the last error.
  case socket(EventLoopError)
  /// ICE checks failed on every pair, or consent was lost (RFC 7675).
  case iceFailed
  /// The DTLS endpoint failed: handshake, fingerprint mismatch (RFC 8122 §5), timeout.
  case dtls(DTLSError)
  /// `a=setup` values that cannot be combined (RFC 5763 §5).
  case incompatibleSetup(reason: String)
  /// The negotiated protection profile has no SRTP implementation, or libsrtp refused the keys.
  case srtp(SRTPError)
  /// Media sent before `.connected` (no SRTP keys yet) or after close.
  case notConnected
  /// The packet does not fit the send buffer (`bytes` given, 65,507 − trailer allowed).
  case packetTooLarge(bytes: Int)
  /// The SDP could not be parsed or lacks what a transport needs.
  case sdp(reason: String)
  /// The remote offer parses but has no media section to accept (no `m=` line, or every one
  /// has port 0), so there is nothing to answer (RFC 3264 §6).
  case unanswerableOffer(SDPOfferError)
}

/// What a `PeerConnection` reports to its owner, on its event loop thread, in order.
public enum PeerConnectionEvent: Equatable, Sendable {
  /// The state changed (never reported twice in a row with the same value).
  case stateChanged(PeerConnectionState)
  /// A new local candidate (server-reflexive or relayed ones come after the description; send
  /// them by trickle if the peer supports it).
  case localCandidate(ICECandidate)
  /// Local candidate gathering finished.
  case gatheringComplete
  /// ICE selected (or switched) the candidate pair media uses.
  case selectedPair(ICECandidatePair)
  /// DTLS verified the peer; SRTP is keyed with `profile`, this side plays `role`.
  case dtlsConnected(role: DTLSRole, profile: DTLSSRTPProfile)
  /// The peer sent DTLS close_notify (RFC 5246 §7.2.1).
  case remoteClosed
}

/// ICE and DTLS parameters one side signals in SDP (RFC 8839 §5, RFC 8122 §5, RFC 8842 §5),
/// independent of the SDP text.
public struct PeerConnectionTransportDescription: Equatable, Sendable {
  /// `a=ice-ufrag` / `a=ice-pwd`.
  public var iceCredentials: ICECredentials
  /// `a=ice-lite`.
  public var iceLite: Bool
  /// `a=candidate` lines (component 1; RTP and RTCP muxed).
  public var candidates: [ICECandidate]
  /// `a=end-of-candidates` (RFC 8840 §8.2): no more candidates will come.
  public var endOfCandidates: Bool
  /// `a=fingerprint` of the side's DTLS certificate (the first of `fingerprints`).
  public var fingerprint: DTLSFingerprint {
    get { fingerprints[0] }
    set { fingerprints = [newValue] }
  }
  /// Every usable `a=fingerprint` of the side, in SDP order, never empty (RFC 8122 §5: several
  /// may be given; a certificate matching any is the side's).
  public private(set) var fingerprints: [DTLSFingerprint]
  /// `a=setup`, `nil` when the SDP had none.
  public var setup: DTLSSetup?

  /// Makes a description from its parts.
  public init(
    iceCredentials: ICECredentials, iceLite: Bool = false, candidates: [ICECandidate] = [],
    endOfCandidates: Bool = true, fingerprint: DTLSFingerprint,
    additionalFingerprints: [DTLSFingerprint] = [], setup: DTLSSetup?
  ) {
    self.iceCredentials = iceCredentials
    self.iceLite = iceLite
    self.candidates = candidates
    self.endOfCandidates = endOfCandidates
    self.fingerprints = [fingerprint] + additionalFingerprints
    self.setup = setup
  }
}

/// Counters and negotiated parameters of a `PeerConnection` (cf. WebRTC stats
/// `transport`, `candidate-pair`, `outbound-rtp`, `inbound-rtp`, `remote-inbound-rtp`).
public struct PeerConnectionStats: Equatable, Sendable {
  /// The state when the stats were taken.
  public var state: PeerConnectionState = .new
  /// RTP packets protected and sent.
  public var rtpPacketsSent = 0
  /// Bytes of those RTP packets before protection (header + payload).
  public var rtpBytesSent = 0
  /// RTP packets received and unprotected.
  public var rtpPacketsReceived = 0
  /// Bytes of those RTP packets after unprotection (header + payload).
  public var rtpBytesReceived = 0
  /// RTCP compound packets protected and sent.
  public var rtcpPacketsSent = 0
  /// RTCP compound packets received and unprotected.
  public var rtcpPacketsReceived = 0
  /// SRTP/SRTCP packets dropped: authentication failed, replayed, or malformed.
  public var srtpDrops = 0
  /// RTP packets `sendRTP` refused: not connected, too large, SRTP protection failed (e.g. an
  /// index older than the replay window), or the socket refused the send.
  public var rtpSendFailures = 0
  /// RTCP compounds `sendRTCP` refused, for the same reasons.
  public var rtcpSendFailures = 0
  /// Datagrams dropped because they came before keys or from an address ICE did not validate.
  public var unexpectedDatagrams = 0
  /// Application datagrams (DTLS, SRTP, SRTCP) sent through a TURN relay in Send indications
  /// (RFC 8656 §11), when the local candidate in use is relayed.
  public var relayedDatagramsSent = 0
  /// Application datagrams for a TURN relay that could not go out: the allocation was not
  /// usable (failed or lost) or the socket refused the send.
  public var relayedSendFailures = 0
  /// Round-trip time from the newest RTCP report block about an SSRC we send
  /// (RFC 3550 §6.4.1: arrival − LSR − DLSR), `nil` until one arrived.
  public var roundTripTime: Duration?
  /// The candidate pair media uses.
  public var selectedPair: ICECandidatePair?
  /// The ICE role we play now.
  public var iceRole: ICERole?
  /// Our DTLS role once known.
  public var dtlsRole: DTLSRole?
  /// The protection profile DTLS negotiated.
  public var protectionProfile: DTLSSRTPProfile?

  /// All zero, state `.new`.
  public init() {}
}
