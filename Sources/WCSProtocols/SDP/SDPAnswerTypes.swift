/// The remote ICE and DTLS parameters of one transport, taken from an answer
/// (RFC 8839 §5, RFC 8122 §5, RFC 8842 §5).
public struct RemoteTransportParameters: Hashable, Sendable {
  /// `a=ice-ufrag`, media level over session level.
  public var iceUfrag: String
  /// `a=ice-pwd`, media level over session level.
  public var icePwd: String
  /// `a=ice-lite` (RFC 8839 §5.3): the remote side is lite, so this side is controlling.
  public var iceLite: Bool
  /// Remote candidates, de-duplicated on (component, transport, address, port) and without
  /// transports other than UDP/TCP (e.g. `ssltcp`).
  public var candidates: [ICECandidateAttribute]
  /// `a=end-of-candidates` was present (RFC 8840 §8.2): no more candidates will come.
  public var endOfCandidates: Bool
  /// Remote certificate fingerprint, media level over session level: the first of
  /// `fingerprints`.
  public var fingerprint: CertificateFingerprint
  /// Every `a=fingerprint` of the level `fingerprint` came from, in SDP order (RFC 8122 §5: an
  /// endpoint may give several, e.g. one per hash function); the certificate may match any.
  public var fingerprints: [CertificateFingerprint]
  /// Remote DTLS role (`active` means the remote side is the DTLS client).
  public var setup: DTLSSetup
  /// `true` when the answer had no usable `a=setup` and `setup` is the WCS default `active`
  /// (wcs-protocol.md §4.3).
  public var setupDefaulted: Bool

  /// Creates transport parameters.
  public init(
    iceUfrag: String, icePwd: String, iceLite: Bool, candidates: [ICECandidateAttribute],
    endOfCandidates: Bool, fingerprint: CertificateFingerprint,
    additionalFingerprints: [CertificateFingerprint] = [], setup: DTLSSetup,
    setupDefaulted: Bool
  ) {
    self.iceUfrag = iceUfrag
    self.icePwd = icePwd
    self.iceLite = iceLite
    self.candidates = candidates
    self.endOfCandidates = endOfCandidates
    self.fingerprint = fingerprint
    self.fingerprints = [fingerprint] + additionalFingerprints
    self.setup = setup
    self.setupDefaulted = setupDefaulted
  }
}

/// A codec the answer accepted in one m-section.
public struct NegotiatedCodec: Hashable, Sendable {
  /// The answer's rtpmap (or the RFC 3551 static mapping) of the payload type.
  public var rtpMap: RTPMap
  /// The answer's `a=fmtp` for it.
  public var formatParameters: FormatParameters?
  /// The answer's `a=rtcp-fb` lines for it (including `*`).
  public var rtcpFeedback: [RTCPFeedback]
  /// The payload type the offer used for the same codec (name case-insensitive and clock
  /// rate), nil when no offer was given.
  public var offeredPayloadType: Int?

  /// The answer's payload type.
  public var payloadType: Int { rtpMap.payloadType }
}

/// One m-section of an answer matched with the offer.
public struct NegotiatedMediaSection: Hashable, Sendable {
  /// Index of the section in the answer (RFC 3264 §6 m-line index).
  public var index: Int
  /// Index of the matching offer section (by `a=mid`, else by index); nil without an offer or
  /// when none matches.
  public var offerIndex: Int?
  /// `a=mid`, nil when the answer has none (then matching is by index).
  public var mid: String?
  /// Media type (`audio`, `video`, ...).
  public var kind: String
  /// Port 0 in the answer: rejected (RFC 3264 §6).
  public var isRejected: Bool
  /// The answer's direction.
  public var direction: MediaDirection
  /// Accepted codecs in the answer's `m=` order (with an offer: only those the offer had).
  public var codecs: [NegotiatedCodec]
  /// This section's transport (the bundle transport for bundled sections); nil when rejected
  /// or when the section carries no ICE/DTLS parameters of its own.
  public var transport: RemoteTransportParameters?

  /// Accepted payload types, in order.
  public var payloadTypes: [Int] { codecs.map(\.payloadType) }
}

/// What an answer says, as the media layer needs it.
public struct SDPAnswerAnalysis: Hashable, Sendable {
  /// Transport of the first accepted section (the BUNDLE transport when bundled).
  public var transport: RemoteTransportParameters
  /// Every answer m-section, in order.
  public var media: [NegotiatedMediaSection]
  /// The answer's BUNDLE group mids, empty when not bundled.
  public var bundledMids: [String]
  /// Log entries about tolerated problems (defaulted setup, dropped candidates, ...).
  public var notes: [String]
}

/// Why a remote answer cannot be used, thrown by `SDPAnswerReader.analyze` before anything of
/// the answer is applied (the session stays as it was); each case says what is missing and,
/// where it matters, in which m-section (0-based `mediaIndex`).
public enum SDPAnswerError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The answer has no `m=` line at all.
  case noMediaSections
  /// Every m-section has port 0: the answerer rejected each offered stream (RFC 3264 §6).
  case allMediaSectionsRejected
  /// The section at `mediaIndex` has no `a=ice-ufrag`/`a=ice-pwd` at media or session level.
  case missingICECredentials(mediaIndex: Int)
  /// The section at `mediaIndex` has an `a=ice-ufrag` or `a=ice-pwd` that is empty or longer
  /// than RFC 8839 §5.4's 256 characters (lengths in UTF-8 bytes).
  case invalidICECredentials(mediaIndex: Int, ufragLength: Int, pwdLength: Int)
  /// The section at `mediaIndex` has no valid `a=fingerprint` at media or session level.
  case missingFingerprint(mediaIndex: Int)

  /// One line saying what the answer lacks (`every media section is rejected (port 0)`).
  public var description: String {
    switch self {
    case .noMediaSections: return "no media sections"
    case .allMediaSectionsRejected: return "every media section is rejected (port 0)"
    case .missingICECredentials(let index):
      return "m-section \(index) has no a=ice-ufrag/a=ice-pwd"
    case .invalidICECredentials(let index, let ufrag, let pwd):
      return
        "m-section \(index): a=ice-ufrag (\(ufrag) bytes) or a=ice-pwd (\(pwd) bytes) is empty or over 256 (RFC 8839 §5.4)"
    case .missingFingerprint(let index): return "m-section \(index) has no usable a=fingerprint"
    }
  }
}
