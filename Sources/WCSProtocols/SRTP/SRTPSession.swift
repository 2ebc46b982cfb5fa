import COpenSSL
import Synchronization

/// Packets an `SRTPSession` processed or dropped.
public struct SRTPCounters: Equatable, Sendable {
  /// RTP and RTCP packets protected or unprotected successfully.
  public var processed: UInt64 = 0
  /// Packets dropped because the authentication tag did not verify.
  public var authenticationFailures: UInt64 = 0
  /// Packets dropped by replay protection.
  public var replays: UInt64 = 0

  /// All zero.
  public init() {}

  /// Counts one libsrtp result: success, an authentication failure, or a replay (within the
  /// window or older than it); other statuses are not counted.
  @inline(__always)
  mutating func count(_ status: srtp_err_status_t) {
    switch status {
    case srtp_err_status_ok: processed += 1
    case srtp_err_status_auth_fail: authenticationFailures += 1
    case srtp_err_status_replay_fail, srtp_err_status_replay_old: replays += 1
    default: break
    }
  }
}

/// One direction of SRTP/SRTCP (RFC 3711, RFC 7714) over libsrtp2.
///
/// An outbound session protects what this endpoint sends, an inbound one unprotects what the peer
/// sends. Streams are created per SSRC on demand (`ssrc_any_outbound` / `ssrc_any_inbound`), with
/// replay protection on and a window of `replayWindowSize` packets (RFC 3711 §3.3.2), so a
/// retransmission that arrives late, behind up to that many newer packets, is still accepted
/// once. An outbound session may protect a sequence number again (libsrtp's `allow_repeat_tx`):
/// a NACK answered by a plain resend (RFC 4585 §6.2.1 without RTX) sends the packet as first
/// sent, so the same index protects the same plaintext. Packets are processed in place in
/// the caller's buffer. The libsrtp context lives behind a mutex, so a session may be shared
/// between threads; each call holds the lock for one packet.
public final class SRTPSession: Sendable {
  /// Which side of the session this context handles.
  public enum Direction: Sendable {
    /// Unprotects packets from the peer.
    case inbound
    /// Protects packets to the peer.
    case outbound
  }

  /// Packets the replay window covers, inbound and outbound (libwebrtc's 1024; libsrtp allows
  /// up to 0x7fff). Outbound, it bounds how far back a resend may go: an index older than the
  /// window is refused as `srtp_err_status_replay_old`, repeat or not.
  public static let replayWindowSize = 1024

  /// The protection profile.
  public let profile: SRTPProtectionProfile
  /// Inbound (unprotect) or outbound (protect).
  public let direction: Direction
  /// The libsrtp context. Safe to share: it is only passed to libsrtp inside `counters`'
  /// lock, which serializes every use, and freed in `deinit` when no other reference exists.
  nonisolated(unsafe) private let context: OpaquePointer
  /// The counters; its lock also guards every use of `context`.
  private let state = Mutex(SRTPCounters())

  /// Creates a session for `profile` from a master key and salt.
  ///
  /// Throws `SRTPError.invalidKeyLength` when the lengths do not match the profile, or
  /// `SRTPError.library` when libsrtp refuses the policy.
  public init(
    profile: SRTPProtectionProfile, masterKey: SRTPMasterKey, direction: Direction
  ) throws(SRTPError) {
    guard masterKey.key.count == profile.keyLength, masterKey.salt.count == profile.saltLength
    else {
      throw .invalidKeyLength(
        expectedKey: profile.keyLength, expectedSalt: profile.saltLength,
        key: masterKey.key.count, salt: masterKey.salt.count)
    }
    try SRTPLibrary.ensureInitialized()
    var policy = srtp_policy_t()
    switch profile {
    case .aes128CMHMACSHA1_80:
      wcs_srtp_policy_aes_cm_128_hmac_sha1_80(&policy.rtp)
      wcs_srtp_policy_aes_cm_128_hmac_sha1_80(&policy.rtcp)
    case .aes128CMHMACSHA1_32:
      wcs_srtp_policy_aes_cm_128_hmac_sha1_32(&policy.rtp)
      // RFC 5764 §4.1.2: SRTCP keeps the 80-bit tag with the _32 profile.
      wcs_srtp_policy_aes_cm_128_hmac_sha1_80(&policy.rtcp)
    case .aeadAES128GCM:
      wcs_srtp_policy_aead_aes_128_gcm(&policy.rtp)
      wcs_srtp_policy_aead_aes_128_gcm(&policy.rtcp)
    case .aeadAES256GCM:
      wcs_srtp_policy_aead_aes_256_gcm(&policy.rtp)
      wcs_srtp_policy_aead_aes_256_gcm(&policy.rtcp)
    }
    policy.ssrc.type = direction == .inbound ? ssrc_any_inbound : ssrc_any_outbound
    policy.ssrc.value = 0
    policy.window_size = UInt(Self.replayWindowSize)
    policy.allow_repeat_tx = direction == .outbound ? 1 : 0
    policy.next = nil
    var keyAndSalt = masterKey.key + masterKey.salt
    var context: OpaquePointer?
    let status = keyAndSalt.withUnsafeMutableBufferPointer { keyBuffer in
      policy.key = keyBuffer.baseAddress
      return srtp_create(&context, &policy)
    }
    // libsrtp copied the key into its context; do not leave a copy in this array.
    for index in keyAndSalt.indices { keyAndSalt[index] = 0 }
    guard status == srtp_err_status_ok, let context else { throw .library(SRTPStatus(status)) }
    self.profile = profile
    self.direction = direction
    self.context = context
  }

  deinit {
    _ = srtp_dealloc(context)
  }

  /// Packets processed and dropped so far.
  public var counters: SRTPCounters { state.withLock { $0 } }

  private enum Operation {
    case protectRTP, unprotectRTP, protectRTCP, unprotectRTCP
  }

  private func run(
    _ operation: Operation, _ buffer: UnsafeMutableRawBufferPointer, length: Int
  ) throws(SRTPError) -> Int {
    let outbound = operation == .protectRTP || operation == .protectRTCP
    guard outbound == (direction == .outbound) else { throw .wrongDirection }
    let isRTP = operation == .protectRTP || operation == .unprotectRTP
    let minimum =
      isRTP
      ? (outbound ? 12 : 12 + profile.rtpTrailerLength)
      : (outbound ? 8 : 8 + profile.rtcpTrailerLength)
    guard length >= minimum else { throw .packetTooShort(length: length) }
    let trailer = outbound ? (isRTP ? profile.rtpTrailerLength : profile.rtcpTrailerLength) : 0
    guard length <= Int(Int32.max) - trailer, let base = buffer.baseAddress,
      buffer.count >= length + trailer
    else {
      throw .bufferTooSmall(needed: length + trailer, available: buffer.count)
    }
    var newLength = Int32(length)
    let status = state.withLock { counters -> srtp_err_status_t in
      let status: srtp_err_status_t
      switch operation {
      case .protectRTP: status = srtp_protect(context, base, &newLength)
      case .unprotectRTP: status = srtp_unprotect(context, base, &newLength)
      case .protectRTCP: status = srtp_protect_rtcp(context, base, &newLength)
      case .unprotectRTCP: status = srtp_unprotect_rtcp(context, base, &newLength)
      }
      counters.count(status)
      return status
    }
    guard status == srtp_err_status_ok else { throw SRTPError(status) }
    return Int(newLength)
  }

  /// Protects the RTP packet in the first `length` octets of `buffer` in place and returns the
  /// SRTP length (`length + profile.rtpTrailerLength`).
  ///
  /// Throws `bufferTooSmall` without touching the buffer when it lacks room for the tag,
  /// `wrongDirection` on an inbound session, or `library` for other libsrtp statuses.
  public func protectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError)
    -> Int
  {
    try run(.protectRTP, buffer, length: length)
  }

  /// Verifies and decrypts the SRTP packet in the first `length` octets of `buffer` in place and
  /// returns the RTP length.
  ///
  /// Throws `authenticationFailed` or `replayed` (both counted in `counters`), `wrongDirection`
  /// on an outbound session, or `library` for other statuses.
  public func unprotectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError)
    -> Int
  {
    // Its own body rather than `run(.unprotectRTP, ...)`: this runs for every received media
    // packet, cache-cold, and the four-way operation switches of `run` were ≈ 14 code lines a
    // packet (`scripts/play-cache-misses.sh`). Same checks, same counting, same errors.
    guard direction == .inbound else { throw .wrongDirection }
    guard length >= 12 + profile.rtpTrailerLength else { throw .packetTooShort(length: length) }
    guard length <= Int(Int32.max), let base = buffer.baseAddress, buffer.count >= length else {
      throw .bufferTooSmall(needed: length, available: buffer.count)
    }
    var newLength = Int32(length)
    let status = state.withLock { counters -> srtp_err_status_t in
      let status = srtp_unprotect(context, base, &newLength)
      counters.count(status)
      return status
    }
    guard status == srtp_err_status_ok else { throw SRTPError(status) }
    return Int(newLength)
  }

  /// Protects the (compound) RTCP packet in place and returns the SRTCP length
  /// (`length + profile.rtcpTrailerLength`). Errors as `protectRTP`.
  public func protectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError)
    -> Int
  {
    try run(.protectRTCP, buffer, length: length)
  }

  /// Verifies and decrypts the SRTCP packet in place and returns the RTCP length.
  /// Errors as `unprotectRTP`.
  public func unprotectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int)
    throws(SRTPError) -> Int
  {
    try run(.unprotectRTCP, buffer, length: length)
  }

  private func transform(_ packet: inout [UInt8], _ operation: Operation) throws(SRTPError) {
    let length = packet.count
    let outbound = operation == .protectRTP || operation == .protectRTCP
    let isRTP = operation == .protectRTP || operation == .unprotectRTP
    if outbound {
      let trailer = isRTP ? profile.rtpTrailerLength : profile.rtcpTrailerLength
      packet.append(contentsOf: repeatElement(0, count: trailer))
    }
    let result: Result<Int, SRTPError> = packet.withUnsafeMutableBytes { buffer in
      do throws(SRTPError) { return .success(try run(operation, buffer, length: length)) } catch {
        return .failure(error)
      }
    }
    switch result {
    case .success(let newLength): packet.removeLast(packet.count - newLength)
    case .failure(let error):
      if outbound { packet.removeLast(packet.count - length) }
      throw error
    }
  }

  /// Protects `packet` (RTP) in place, growing it by the tag. Errors as the buffer form.
  public func protectRTP(_ packet: inout [UInt8]) throws(SRTPError) {
    try transform(&packet, .protectRTP)
  }

  /// Unprotects `packet` (SRTP) in place, shrinking it to the RTP packet. Errors as the buffer form.
  public func unprotectRTP(_ packet: inout [UInt8]) throws(SRTPError) {
    try transform(&packet, .unprotectRTP)
  }

  /// Protects `packet` (RTCP) in place. Errors as the buffer form.
  public func protectRTCP(_ packet: inout [UInt8]) throws(SRTPError) {
    try transform(&packet, .protectRTCP)
  }

  /// Unprotects `packet` (SRTCP) in place. Errors as the buffer form.
  public func unprotectRTCP(_ packet: inout [UInt8]) throws(SRTPError) {
    try transform(&packet, .unprotectRTCP)
  }

  /// The outbound and inbound sessions for one DTLS-SRTP association: splits `keyingMaterial`
  /// (RFC 5764 §4.2) by `role` and creates both. Errors as `SRTPKeyingMaterial.split` and `init`.
  public static func pair(
    profile: SRTPProtectionProfile, keyingMaterial: [UInt8], role: SRTPKeyingMaterial.DTLSRole
  ) throws(SRTPError) -> (outbound: SRTPSession, inbound: SRTPSession) {
    let keys = try SRTPKeyingMaterial.split(keyingMaterial, profile: profile, role: role)
    return (
      outbound: try SRTPSession(profile: profile, masterKey: keys.local, direction: .outbound),
      inbound: try SRTPSession(profile: profile, masterKey: keys.remote, direction: .inbound)
    )
  }
}
