/// One `a=` line (RFC 8866 §5.13). Common WebRTC attributes are typed; everything else (and any
/// typed attribute whose value could not be parsed) is kept verbatim as
/// ``other(name:value:)``.
public enum SDPAttribute: Hashable, Sendable {
  /// `a=rtpmap` (RFC 8866 §6.6).
  case rtpmap(RTPMap)
  /// `a=fmtp` (RFC 8866 §6.15).
  case fmtp(FormatParameters)
  /// `a=rtcp-fb` (RFC 4585 §4.2).
  case rtcpFeedback(RTCPFeedback)
  /// `a=extmap` (RFC 8285 §8).
  case extmap(HeaderExtensionMap)
  /// `a=ssrc:<ssrc> <attribute>[:<value>]` (RFC 5576 §4.1).
  case ssrc(SSRCAttribute)
  /// `a=ssrc-group:<semantics> <ssrc>...` (RFC 5576 §4.2).
  case ssrcGroup(SSRCGroup)
  /// `a=msid:<stream-id> [<track-id>]` (RFC 8830 §2).
  case msid(MediaStreamID)
  /// `a=mid:<id>` (RFC 9143 §5 / RFC 5888 §4).
  case mid(String)
  /// `a=group:<semantics> <mid>...`, e.g. BUNDLE (RFC 5888 §5, RFC 9143 §7).
  case group(SDPGroup)
  /// `a=rtcp-mux` (RFC 5761 §5.1.1).
  case rtcpMux
  /// `a=rtcp-rsize` (RFC 5506 §5).
  case rtcpReducedSize
  /// `a=ice-ufrag` (RFC 8839 §5.4).
  case iceUfrag(String)
  /// `a=ice-pwd` (RFC 8839 §5.4).
  case icePwd(String)
  /// `a=ice-options`, space-separated tokens such as `trickle` (RFC 8839 §5.6).
  case iceOptions([String])
  /// `a=ice-lite` (RFC 8839 §5.3).
  case iceLite
  /// `a=candidate` (RFC 8839 §5.1).
  indirect case candidate(ICECandidateAttribute)
  /// `a=end-of-candidates` (RFC 8840 §8.2).
  case endOfCandidates
  /// `a=fingerprint` (RFC 8122 §5).
  case fingerprint(CertificateFingerprint)
  /// `a=setup` (RFC 4145 §4, RFC 8842 §5).
  case setup(DTLSSetup)
  /// `a=sendrecv` / `sendonly` / `recvonly` / `inactive` (RFC 8866 §6.7).
  case direction(MediaDirection)
  /// `a=sctp-port` (RFC 8841 §5.2).
  case sctpPort(Int)
  /// Any other attribute: `name` is the text between `a=` and the first `:`, `value` the rest
  /// verbatim (nil for a flag attribute with no `:`).
  case other(name: String, value: String?)
}

/// Media direction attributes (RFC 8866 §6.7, RFC 3264 §5.1).
public enum MediaDirection: String, Hashable, Sendable, CaseIterable {
  /// Send and receive (the default when no direction is given).
  case sendrecv
  /// Send only.
  case sendonly
  /// Receive only.
  case recvonly
  /// Neither.
  case inactive

  /// The direction the other side answers with (RFC 3264 §6.1): sendonly ↔ recvonly.
  public var reversed: MediaDirection {
    switch self {
    case .sendonly: return .recvonly
    case .recvonly: return .sendonly
    case .sendrecv, .inactive: return self
    }
  }
}
