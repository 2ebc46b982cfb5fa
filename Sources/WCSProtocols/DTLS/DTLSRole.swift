/// The SDP `a=setup` attribute value (RFC 4145 §4, used for DTLS by RFC 5763 §5 and RFC 8842).
public enum DTLSSetup: String, Hashable, Sendable, CaseIterable {
  /// This side opens the connection: the DTLS client.
  case active
  /// This side waits for the connection: the DTLS server.
  case passive
  /// Either; only valid in an offer. WebRTC offers always use it (RFC 8842 §5.2).
  case actpass
  /// No connection now.
  case holdconn

  /// The `a=setup` an answerer puts in its answer to an offer carrying `offer`
  /// (RFC 8842 §5.3, RFC 4145 §4.1):
  ///
  /// | remote offer      | our answer | our DTLS role |
  /// |-------------------|------------|---------------|
  /// | `actpass`         | `active`   | client        |
  /// | `active`          | `passive`  | server        |
  /// | `passive`         | `active`   | client        |
  /// | missing           | `passive`  | server (RFC 4145 §4: a missing value means `active`) |
  /// | `holdconn`        | `holdconn` | none          |
  public static func answer(toOffer offer: DTLSSetup?) -> DTLSSetup {
    switch offer {
    case .actpass, .passive: return .active
    case .active, nil: return .passive
    case .holdconn: return .holdconn
    }
  }
}

/// Which side of the DTLS handshake this endpoint plays (RFC 6347): the client sends the
/// ClientHello, the server answers it.
public enum DTLSRole: Sendable, Equatable {
  /// Sends the ClientHello; the side whose `a=setup` resolved to `active`.
  case client
  /// Waits for the ClientHello; the side whose `a=setup` resolved to `passive`.
  case server

  /// The DTLS role from our own `a=setup` and the peer's (RFC 5763 §5, RFC 8842 §5), where
  /// `localSetup` is what we signalled (as offerer or answerer) and `remoteSetup` what the peer
  /// signalled, `nil` when its SDP had no `a=setup`:
  ///
  /// | local     | remote            | role                                          |
  /// |-----------|-------------------|-----------------------------------------------|
  /// | `actpass` | `active`          | server                                        |
  /// | `actpass` | `passive`         | client                                        |
  /// | `actpass` | missing           | server: a WCS answer without `a=setup` is taken as `active` (wcs-protocol.md §4.3); pair with `DTLSEndpoint`'s `fallbackToClientAfter` |
  /// | `actpass` | `actpass`         | server: invalid in an answer (RFC 5763 §5), read leniently like a missing value |
  /// | `active`  | `passive`, `actpass`, missing | client                            |
  /// | `passive` | `active`, `actpass`, missing  | server                            |
  ///
  /// Throws `DTLSError.incompatibleSetup` when both sides are `active` or both `passive`, or
  /// either side is `holdconn`.
  public static func from(localSetup: DTLSSetup, remoteSetup: DTLSSetup?) throws(DTLSError)
    -> DTLSRole
  {
    switch (localSetup, remoteSetup) {
    case (.holdconn, _), (_, .holdconn), (.active, .active), (.passive, .passive):
      throw .incompatibleSetup(local: localSetup, remote: remoteSetup)
    case (.actpass, .active), (.actpass, .actpass), (.actpass, nil):
      return .server
    case (.actpass, .passive):
      return .client
    case (.active, _):
      return .client
    case (.passive, _):
      return .server
    }
  }

  /// Whether the role from `from(localSetup:remoteSetup:)` was a guess that the endpoint should
  /// back up with a client fallback (`DTLSEndpoint`'s `fallbackToClientAfter`): true when we
  /// offered `actpass` and the answer had no (or an invalid `actpass`) `a=setup`.
  public static func isGuessed(localSetup: DTLSSetup, remoteSetup: DTLSSetup?) -> Bool {
    localSetup == .actpass && (remoteSetup == nil || remoteSetup == .actpass)
  }
}
