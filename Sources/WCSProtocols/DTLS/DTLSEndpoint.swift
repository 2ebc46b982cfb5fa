import COpenSSL

/// One side of a DTLS 1.2 association for DTLS-SRTP (RFC 5764) and data channels, Sans-I/O:
/// datagrams in, datagrams and events out, the next deadline for the driver's timer.
///
/// OpenSSL does the protocol; its records travel through an in-memory datagram channel, so every
/// datagram in `DTLSOutput.datagrams` is at most `mtu` bytes (`SSL_OP_NO_QUERY_MTU` +
/// `DTLS_set_link_mtu`). `.connected` is reported only after the peer's certificate matched the
/// SDP fingerprint (RFC 8122 §5), which may be given after the handshake finished.
///
/// Not thread-safe: create and call it from one thread (the event loop).
///
/// Timers: OpenSSL's retransmission timer runs on the real clock (`gettimeofday`), not on the
/// `now` passed in. `nextDeadline` is `now` plus the time OpenSSL says is left, and a
/// retransmission happens only once that real time has passed. The handshake timeout and the
/// client fallback use the caller's clock.
public final class DTLSEndpoint {
  /// Where the endpoint is in its life.
  public enum State: Equatable, Sendable {
    /// Created; `start(now:)` not called yet.
    case new
    /// Handshake running (a server waits for the ClientHello here).
    case handshaking
    /// Handshake done, waiting for the remote fingerprint to verify the peer certificate.
    case awaitingRemoteFingerprint
    /// Verified; `.connected` was reported.
    case connected
    /// Closed by `close(now:)` or by the peer's close_notify.
    case closed
    /// Stopped by an error; `.failed` was reported.
    case failed(DTLSError)
  }

  /// Client or server; a server with `fallbackToClientAfter` may turn into a client.
  public private(set) var role: DTLSRole
  /// Current state.
  public private(set) var state: State = .new
  /// The first fingerprint from the peer's SDP, if known.
  public var remoteFingerprint: DTLSFingerprint? { remoteFingerprints.first }
  /// Every fingerprint from the peer's SDP (RFC 8122 §5 allows several); the peer certificate
  /// is accepted when it matches any. Empty until known.
  public private(set) var remoteFingerprints: [DTLSFingerprint]
  /// SHA-256 fingerprint of the certificate the peer presented, once the handshake finished.
  public private(set) var peerCertificateFingerprint: DTLSFingerprint?
  /// The protection profile the handshake settled on, once it finished.
  public private(set) var negotiatedProfile: DTLSSRTPProfile?
  /// When the driver must call `handleTimeout(now:)` next, on the clock of the `now` values
  /// passed in; `nil` when nothing is pending. Updated by every call.
  public private(set) var nextDeadline: MediaInstant?
  /// Flights OpenSSL retransmitted so far (by `handleTimeout(now:)` or on its own while reading
  /// once its real-time timer had expired).
  public var retransmissions: Int { channel.timerExpiries }
  /// The link MTU in bytes: no output datagram is larger.
  public let mtu: Int

  private let certificate: DTLSCertificate
  private let profiles: [DTLSSRTPProfile]
  private let handshakeTimeout: MediaDuration
  private let maxRetransmissions: Int
  private let context: OpaquePointer
  private let channel: DTLSDatagramChannel
  /// The OpenSSL connection; internal so tests can read what OpenSSL negotiated.
  private(set) var ssl: OpaquePointer
  private var handshakeStartedAt: MediaInstant?
  private var fallbackAfter: MediaDuration?
  private var fallbackDeadline: MediaInstant?
  private var receivedDatagram = false
  private var peerCertificateDER: [UInt8]?
  private var keyingMaterial: [UInt8]?
  private var heldApplicationData: [[UInt8]] = []
  /// Records kept while the fingerprint is unknown; more are dropped (SCTP retransmits them), so
  /// a peer cannot make us buffer without bound.
  private static let heldApplicationDataLimit = 64

  /// Creates an endpoint; nothing is sent until `start(now:)`.
  ///
  /// - Parameters:
  ///   - role: from `DTLSRole.from(localSetup:remoteSetup:)`.
  ///   - certificate: our identity, usually `DTLSCertificate.shared`.
  ///   - remoteFingerprint: from the peer's `a=fingerprint`; `nil` if its SDP has not arrived
  ///     (give it later with `setRemoteFingerprint(_:now:)`).
  ///   - additionalRemoteFingerprints: the peer's further `a=fingerprint` values (RFC 8122 §5);
  ///     a certificate matching any one of them is accepted.
  ///   - profiles: SRTP protection profiles in preference order (RFC 5764 §4.1.1).
  ///   - mtu: largest datagram in bytes, at least 256.
  ///   - fallbackToClientAfter: for a server whose role was guessed (no `a=setup` in the answer):
  ///     if no datagram arrived this long after `start(now:)`, become the client and send a
  ///     ClientHello. Ignored for clients.
  ///   - initialRetransmissionTimeout: first retransmission timer of every flight, doubled on
  ///     each expiry up to `maxRetransmissionTimeout`; `defaultInitialRetransmissionTimeout`
  ///     (50 ms) unless given. RFC 6347 §4.2.4.1 suggests 1 s, which costs a whole second per
  ///     lost datagram of the four flights.
  ///   - maxRetransmissionTimeout: cap of the doubling, `defaultMaxRetransmissionTimeout` (3 s)
  ///     unless given (RFC 6347 allows up to 60 s; a media session that has waited that long is
  ///     better failed).
  ///   - handshakeTimeout: give up with `DTLSError.timeout` if `.connected` was not reported this
  ///     long after start (a remote fingerprint that never arrives counts too).
  ///   - maxRetransmissions: give up with `DTLSError.timeout` when the timer expires after this
  ///     many retransmissions (10 by default: 50 ms doubling to the 3 s cap is 15 s in all, so
  ///     a shorter `handshakeTimeout` decides first).
  /// - Throws: `DTLSError.setupFailed` if OpenSSL refuses a setting (e.g. the MTU is too small).
  public init(
    role: DTLSRole,
    certificate: DTLSCertificate,
    remoteFingerprint: DTLSFingerprint?,
    additionalRemoteFingerprints: [DTLSFingerprint] = [],
    profiles: [DTLSSRTPProfile] = DTLSSRTPProfile.defaultOffer,
    mtu: Int = 1200,
    fallbackToClientAfter: Duration? = nil,
    initialRetransmissionTimeout: Duration = DTLSEndpoint.defaultInitialRetransmissionTimeout,
    maxRetransmissionTimeout: Duration = DTLSEndpoint.defaultMaxRetransmissionTimeout,
    handshakeTimeout: Duration = .seconds(30),
    maxRetransmissions: Int = 10
  ) throws(DTLSError) {
    self.role = role
    self.certificate = certificate
    self.remoteFingerprints = remoteFingerprint.map { [$0] + additionalRemoteFingerprints } ?? []
    self.profiles = profiles
    self.mtu = mtu
    self.fallbackAfter = role == .server ? fallbackToClientAfter.map(MediaDuration.init) : nil
    self.handshakeTimeout = MediaDuration(handshakeTimeout)
    self.maxRetransmissions = maxRetransmissions
    let initial = Self.microseconds(initialRetransmissionTimeout)
    self.channel = DTLSDatagramChannel(
      mtu: mtu, initialTimeoutMicroseconds: initial,
      maxTimeoutMicroseconds: max(initial, Self.microseconds(maxRetransmissionTimeout)))
    channel.expectedPeerFingerprints = remoteFingerprints
    self.context = try DTLSContext.make(certificate: certificate, profiles: profiles)
    do {
      self.ssl = try Self.makeConnection(context: context, channel: channel, role: role, mtu: mtu)
    } catch {
      SSL_CTX_free(context)
      throw error
    }
  }

  deinit {
    SSL_free(ssl)
    SSL_CTX_free(context)
  }

  /// Starts the handshake: a client sends its ClientHello flight; a server starts waiting (and
  /// its fallback timer, if any). `now`: the driver's clock, which `nextDeadline` and the
  /// handshake timeout are counted on. Calling it again does nothing.
  public func start(now: MediaInstant) -> DTLSOutput {
    var output = DTLSOutput()
    guard state == .new else { return output }
    state = .handshaking
    handshakeStartedAt = now
    if let fallbackAfter { fallbackDeadline = now + fallbackAfter }
    if role == .client { advance(&output, now: now) }
    return finish(output, now: now)
  }

  /// Feeds one datagram received from the peer (demultiplexed as DTLS, RFC 7983). OpenSSL drops
  /// malformed, replayed or unauthenticated records (and an empty datagram is ignored); a fatal
  /// protocol error ends the endpoint with `.failed(.handshakeFailed)` or
  /// `.failed(.connectionFailed)`. Ignored once closed or failed. `now`: when it arrived, on
  /// the driver's clock; a datagram before `start(now:)` starts the endpoint.
  public func receive(_ datagram: [UInt8], now: MediaInstant) -> DTLSOutput {
    var output = DTLSOutput()
    // An empty read means end-of-file to OpenSSL; an empty datagram carries no record.
    guard !datagram.isEmpty else { return output }
    if state == .new { output = start(now: now) }
    guard isRunning else { return output }
    receivedDatagram = true
    fallbackDeadline = nil
    channel.enqueueInbound(datagram)
    advance(&output, now: now)
    channel.discardInbound()
    return finish(output, now: now)
  }

  /// Runs the timers that are due: the client fallback, the handshake timeout and OpenSSL's
  /// retransmission timer. Call it at `nextDeadline` (calling early is harmless); `now` on the
  /// driver's clock. Past the handshake timeout or the retransmission limit the endpoint ends
  /// with `.failed(.timeout(retransmissions:elapsed:))`.
  public func handleTimeout(now: MediaInstant) -> DTLSOutput {
    var output = DTLSOutput()
    guard isRunning, state != .new else { return output }
    if let deadline = fallbackDeadline, now >= deadline, !receivedDatagram, role == .server {
      switchToClient(&output, now: now)
      return finish(output, now: now)
    }
    if isConnecting, let started = handshakeStartedAt, now - started >= handshakeTimeout {
      fail(.timeout(retransmissions: retransmissions, elapsed: (now - started).duration), &output)
      return finish(output, now: now)
    }
    if retransmissionTimerExpired {
      if retransmissions >= maxRetransmissions, state == .handshaking {
        let elapsed = handshakeStartedAt.map { (now - $0).duration } ?? .zero
        fail(.timeout(retransmissions: retransmissions, elapsed: elapsed), &output)
        return finish(output, now: now)
      }
      ERR_clear_error()
      if wcs_dtls_handle_timeout(ssl) < 0 {
        fail(.handshakeFailed(reason: OpenSSLErrorQueue.drain()), &output)
      }
    }
    return finish(output, now: now)
  }

  /// Replaces the first retransmission timeout of every flight OpenSSL arms a timer for from
  /// now on (capped at the endpoint's maximum): for a value derived from the path's round-trip
  /// time (`initialRetransmissionTimeout(roundTripTime:)`) once it is known, before `start`.
  public func setInitialRetransmissionTimeout(_ timeout: Duration) {
    channel.initialTimeoutMicroseconds = min(
      Self.microseconds(timeout), channel.maxTimeoutMicroseconds)
  }

  /// The first retransmission timeout for a path with this round-trip time: twice it, within
  /// 50 ms (`defaultInitialRetransmissionTimeout`) and 3 s, as libwebrtc derives it from the ICE
  /// round-trip time. Twice covers the peer's processing and a late reply without a spurious
  /// retransmission.
  public static func initialRetransmissionTimeout(roundTripTime: Duration) -> Duration {
    min(max(roundTripTime * 2, defaultInitialRetransmissionTimeout), .seconds(3))
  }

  /// Sets or replaces the peer's SDP fingerprint. If the handshake already finished, the peer
  /// certificate is verified now: `.connected` on a match, `.failed(.fingerprintMismatch)` if not.
  /// `now`: the driver's clock, for the deadlines the output carries.
  public func setRemoteFingerprint(_ fingerprint: DTLSFingerprint, now: MediaInstant)
    -> DTLSOutput
  {
    setRemoteFingerprints([fingerprint], now: now)
  }

  /// Sets or replaces every fingerprint of the peer's SDP (RFC 8122 §5); the certificate is
  /// accepted when it matches any. An empty list is ignored. Verifies as
  /// `setRemoteFingerprint(_:now:)` does.
  public func setRemoteFingerprints(
    _ fingerprints: [DTLSFingerprint], now: MediaInstant
  ) -> DTLSOutput {
    var output = DTLSOutput()
    guard !fingerprints.isEmpty else { return finish(output, now: now) }
    remoteFingerprints = fingerprints
    channel.expectedPeerFingerprints = fingerprints
    if state == .awaitingRemoteFingerprint || state == .connected {
      verifyPeer(&output)
    }
    return finish(output, now: now)
  }

  /// Encrypts `data` as one application-data record (keep it under the MTU minus ~40 bytes of
  /// record overhead). Throws `DTLSError.notConnected` unless `.connected` was reported, or
  /// `DTLSError.connectionFailed` if OpenSSL refuses the write. `now`: the driver's clock.
  public func send(_ data: [UInt8], now: MediaInstant) throws(DTLSError) -> DTLSOutput {
    guard state == .connected else { throw .notConnected }
    guard !data.isEmpty else { return DTLSOutput() }
    ERR_clear_error()
    let written = data.withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) }
    guard written > 0 else {
      throw .connectionFailed(reason: describe(SSL_get_error(ssl, written)))
    }
    return finish(DTLSOutput(), now: now)
  }

  /// Closes the association: sends close_notify if the handshake finished. No event is
  /// reported locally; the peer reports `.closed`. `now`: the driver's clock. Idempotent.
  public func close(now: MediaInstant) -> DTLSOutput {
    guard isRunning else { return DTLSOutput() }
    if state == .awaitingRemoteFingerprint || state == .connected {
      ERR_clear_error()
      _ = SSL_shutdown(ssl)
      ERR_clear_error()
    }
    state = .closed
    return finish(DTLSOutput(), now: now)
  }

  /// The first retransmission timeout of a flight by default: 50 ms, libwebrtc's choice
  /// (`OpenSSLStreamAdapter`, and the lower clamp of its RTT-based `2 × RTT`). A handshake of
  /// four flights at 10 % loss per datagram loses one datagram in about half the runs; at
  /// OpenSSL's 1 s each such loss delayed the first media by a second. The cost on a long path
  /// is one spurious retransmission of a flight per doubling below the RTT (two for 200 ms:
  /// at 50 and 150 ms), bounded by the doubling itself.
  public static let defaultInitialRetransmissionTimeout: Duration = .milliseconds(50)
  /// The cap of the doubling retransmission timeout by default: 3 s.
  public static let defaultMaxRetransmissionTimeout: Duration = .seconds(3)

  /// The retransmission timeout after one that expired after `previous` µs: doubled, capped at
  /// `maximum` µs (RFC 6347 §4.2.4.1); a zero `previous` (a new flight) gets `initial`.
  static func nextRetransmissionTimeout(
    previous: UInt32, initial: UInt32, maximum: UInt32
  ) -> UInt32 {
    guard previous > 0 else { return initial }
    return UInt32(min(UInt64(previous) * 2, UInt64(maximum)))
  }

  // MARK: - Driving OpenSSL

  /// Started but `.connected` not reported yet: the handshake timeout applies, including while
  /// waiting for the remote fingerprint.
  private var isConnecting: Bool {
    state == .handshaking || state == .awaitingRemoteFingerprint
  }

  private var isRunning: Bool {
    switch state {
    case .new, .handshaking, .awaitingRemoteFingerprint, .connected: return true
    case .closed, .failed: return false
    }
  }

  private func advance(_ output: inout DTLSOutput, now: MediaInstant) {
    if state == .handshaking {
      ERR_clear_error()
      let result = SSL_do_handshake(ssl)
      if result == 1 {
        handshakeFinished(&output)
      } else if retransmissions > maxRetransmissions {
        let elapsed = handshakeStartedAt.map { (now - $0).duration } ?? .zero
        fail(.timeout(retransmissions: retransmissions, elapsed: elapsed), &output)
      } else {
        let error = SSL_get_error(ssl, result)
        if let rejection = channel.peerRejection {
          ERR_clear_error()
          fail(rejection, &output)
        } else if error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE {
          fail(.handshakeFailed(reason: describe(error)), &output)
        }
      }
    }
    if state == .awaitingRemoteFingerprint || state == .connected {
      readApplicationData(&output)
    }
  }

  private func readApplicationData(_ output: inout DTLSOutput) {
    var buffer = [UInt8](repeating: 0, count: 16_384)
    while state == .awaitingRemoteFingerprint || state == .connected {
      ERR_clear_error()
      let count = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
      if count > 0 {
        let data = Array(buffer.prefix(Int(count)))
        if state == .connected {
          output.events.append(.applicationData(data))
        } else if heldApplicationData.count < Self.heldApplicationDataLimit {
          heldApplicationData.append(data)
        }
        continue
      }
      let error = SSL_get_error(ssl, count)
      switch error {
      case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
        return
      case SSL_ERROR_ZERO_RETURN:
        // Answer close_notify with ours (RFC 5246 §7.2.1).
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
        state = .closed
        output.events.append(.closed)
        return
      default:
        fail(.connectionFailed(reason: describe(error)), &output)
        return
      }
    }
  }

  private func handshakeFinished(_ output: inout DTLSOutput) {
    guard let peer = SSL_get1_peer_certificate(ssl) else {
      fail(.missingPeerCertificate, &output)
      return
    }
    defer { X509_free(peer) }
    let der: [UInt8]
    do {
      der = try DTLSCertificate.derEncoding(of: peer)
    } catch {
      fail(error, &output)
      return
    }
    peerCertificateDER = der
    peerCertificateFingerprint = try? DTLSFingerprint(algorithm: .sha256, derCertificate: der)

    guard let selected = SSL_get_selected_srtp_profile(ssl),
      let profile = DTLSSRTPProfile(id: UInt16(truncatingIfNeeded: selected.pointee.id))
    else {
      fail(.noSRTPProfileNegotiated, &output)
      return
    }
    var material = [UInt8](repeating: 0, count: profile.keyingMaterialLength)
    let label = "EXTRACTOR-dtls_srtp"
    let exported = material.withUnsafeMutableBufferPointer { out in
      // No context value (use_context = 0), as RFC 5764 §4.2 requires.
      SSL_export_keying_material(
        ssl, out.baseAddress, out.count, label, label.utf8.count, nil, 0, 0)
    }
    guard exported == 1 else {
      fail(.keyingMaterialExportFailed(reason: OpenSSLErrorQueue.drain()), &output)
      return
    }
    negotiatedProfile = profile
    keyingMaterial = material
    state = .awaitingRemoteFingerprint
    verifyPeer(&output)
  }

  /// Compares the peer certificate with `remoteFingerprints` (each hashed with its own
  /// algorithm; any may match) and reports `.connected` or `.failed(.fingerprintMismatch)`.
  private func verifyPeer(_ output: inout DTLSOutput) {
    guard !remoteFingerprints.isEmpty, let der = peerCertificateDER else { return }
    let mismatch: (expected: DTLSFingerprint, actual: DTLSFingerprint)?
    do {
      mismatch = try DTLSFingerprint.mismatch(derCertificate: der, expected: remoteFingerprints)
    } catch {
      fail(error, &output)
      return
    }
    if let mismatch {
      // Past the handshake no alert can name the certificate; close_notify at least stops the
      // peer from waiting on an association we will never use.
      ERR_clear_error()
      _ = SSL_shutdown(ssl)
      ERR_clear_error()
      fail(.fingerprintMismatch(expected: mismatch.expected, actual: mismatch.actual), &output)
      return
    }
    guard state == .awaitingRemoteFingerprint, let profile = negotiatedProfile,
      let keyingMaterial
    else { return }
    state = .connected
    output.events.append(.connected(profile: profile, keyingMaterial: keyingMaterial))
    output.events.append(contentsOf: heldApplicationData.map { .applicationData($0) })
    heldApplicationData.removeAll()
  }

  private func switchToClient(_ output: inout DTLSOutput, now: MediaInstant) {
    fallbackDeadline = nil
    fallbackAfter = nil
    do {
      let replacement = try Self.makeConnection(
        context: context, channel: channel, role: .client, mtu: mtu)
      SSL_free(ssl)
      ssl = replacement
      role = .client
      advance(&output, now: now)
    } catch {
      fail(error, &output)
    }
  }

  private func fail(_ error: DTLSError, _ output: inout DTLSOutput) {
    guard isRunning else { return }
    state = .failed(error)
    keyingMaterial = nil
    heldApplicationData.removeAll()
    output.events.append(.failed(error))
  }

  /// Collects the datagrams OpenSSL wrote and recomputes `nextDeadline`.
  private func finish(_ output: DTLSOutput, now: MediaInstant) -> DTLSOutput {
    var output = output
    output.datagrams.append(contentsOf: channel.takeOutbound())
    var deadlines: [MediaInstant] = []
    if isRunning && state != .new {
      if let fallbackDeadline { deadlines.append(fallbackDeadline) }
      if isConnecting, let started = handshakeStartedAt {
        deadlines.append(started + handshakeTimeout)
      }
      if let left = retransmissionTimeLeft { deadlines.append(now + left) }
    }
    nextDeadline = deadlines.min()
    return output
  }

  /// Time until OpenSSL's retransmission timer expires (real clock), `nil` if it is not running.
  private var retransmissionTimeLeft: MediaDuration? {
    var seconds = 0
    var microseconds = 0
    guard wcs_dtls_get_timeout(ssl, &seconds, &microseconds) == 1 else { return nil }
    return .seconds(seconds) + .microseconds(microseconds)
  }

  private var retransmissionTimerExpired: Bool {
    retransmissionTimeLeft == .zero
  }

  private func describe(_ sslError: Int32) -> String {
    let queued = OpenSSLErrorQueue.drain()
    switch sslError {
    case SSL_ERROR_SSL: return queued
    case SSL_ERROR_SYSCALL: return "SSL_ERROR_SYSCALL (\(queued))"
    default: return "SSL_get_error \(sslError) (\(queued))"
    }
  }

  // MARK: - OpenSSL objects

  private static func makeConnection(
    context: OpaquePointer, channel: DTLSDatagramChannel, role: DTLSRole, mtu: Int
  ) throws(DTLSError) -> OpaquePointer {
    guard let ssl = SSL_new(context) else {
      throw .setupFailed(reason: "SSL_new: \(OpenSSLErrorQueue.drain())")
    }
    guard let readBIO = DTLSDatagramBIO.shared.makeBIO(for: channel) else {
      SSL_free(ssl)
      throw .setupFailed(reason: "datagram BIO: \(OpenSSLErrorQueue.drain())")
    }
    guard let writeBIO = DTLSDatagramBIO.shared.makeBIO(for: channel) else {
      BIO_free(readBIO)
      SSL_free(ssl)
      throw .setupFailed(reason: "datagram BIO: \(OpenSSLErrorQueue.drain())")
    }
    SSL_set_bio(ssl, readBIO, writeBIO)
    // The timer callback finds the channel (and its initial timeout) through app data slot 0.
    _ = SSL_set_ex_data(ssl, 0, Unmanaged.passUnretained(channel).toOpaque())
    DTLS_set_timer_cb(ssl, dtlsTimerCallback)
    SSL_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, dtlsVerifyCallback)
    guard wcs_dtls_set_link_mtu(ssl, mtu) == 1 else {
      SSL_free(ssl)
      throw .setupFailed(reason: "MTU \(mtu) refused by DTLS_set_link_mtu (minimum is 256)")
    }
    switch role {
    case .client: SSL_set_connect_state(ssl)
    case .server: SSL_set_accept_state(ssl)
    }
    return ssl
  }

  static func microseconds(_ duration: Duration) -> UInt32 {
    UInt32(clamping: max(1, min(MediaDuration(duration).microseconds, 60_000_000)))
  }
}

/// OpenSSL's DTLS timer callback: the first timeout of a flight comes from the endpoint, each
/// later one doubles up to the endpoint's cap (RFC 6347 §4.2.4.1).
private func dtlsTimerCallback(_ ssl: OpaquePointer?, _ previousMicroseconds: UInt32) -> UInt32 {
  guard let ssl, let raw = SSL_get_ex_data(ssl, 0) else {
    let initial = DTLSEndpoint.microseconds(DTLSEndpoint.defaultInitialRetransmissionTimeout)
    return DTLSEndpoint.nextRetransmissionTimeout(
      previous: previousMicroseconds, initial: initial,
      maximum: DTLSEndpoint.microseconds(DTLSEndpoint.defaultMaxRetransmissionTimeout))
  }
  let channel = Unmanaged<DTLSDatagramChannel>.fromOpaque(raw).takeUnretainedValue()
  // OpenSSL passes 0 when it arms a new timer and the running duration when the timer expired
  // and it is about to retransmit.
  if previousMicroseconds > 0 { channel.timerExpiries += 1 }
  return DTLSEndpoint.nextRetransmissionTimeout(
    previous: previousMicroseconds, initial: channel.initialTimeoutMicroseconds,
    maximum: channel.maxTimeoutMicroseconds)
}

/// OpenSSL's certificate verification callback. WebRTC certificates are self-signed and trusted
/// only through the SDP fingerprint (RFC 8122 §5), so chain errors are ignored and the leaf
/// certificate is compared with the fingerprint when it is already known. A mismatch aborts the
/// handshake with a bad_certificate alert, so neither side ever reports `.connected`; an
/// unknown fingerprint is checked after the handshake instead.
private func dtlsVerifyCallback(_ preverified: Int32, _ store: OpaquePointer?) -> Int32 {
  guard let store, X509_STORE_CTX_get_error_depth(store) == 0 else { return 1 }
  guard let sslPointer = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()),
    let raw = SSL_get_ex_data(OpaquePointer(sslPointer), 0)
  else { return 0 }
  let channel = Unmanaged<DTLSDatagramChannel>.fromOpaque(raw).takeUnretainedValue()
  guard !channel.expectedPeerFingerprints.isEmpty else { return 1 }
  guard let certificate = X509_STORE_CTX_get_current_cert(store) else { return 0 }
  guard let der = try? DTLSCertificate.derEncoding(of: certificate) else { return 0 }
  let mismatch: (expected: DTLSFingerprint, actual: DTLSFingerprint)?
  do {
    mismatch = try DTLSFingerprint.mismatch(
      derCertificate: der, expected: channel.expectedPeerFingerprints)
  } catch {
    return 0
  }
  if let mismatch {
    channel.peerRejection = .fingerprintMismatch(
      expected: mismatch.expected, actual: mismatch.actual)
    // Makes OpenSSL send bad_certificate rather than the unknown_ca of the self-signed chain.
    X509_STORE_CTX_set_error(store, X509_V_ERR_CERT_REJECTED)
    return 0
  }
  return 1
}
