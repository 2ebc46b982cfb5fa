import COpenSSL

/// A libsrtp2 status code with its name (`srtp_err_status_t`).
public struct SRTPStatus: Equatable, Sendable, CustomStringConvertible {
  /// The numeric `srtp_err_status_t` value.
  public let rawValue: UInt32

  /// Wraps a libsrtp2 status value.
  public init(rawValue: UInt32) {
    self.rawValue = rawValue
  }

  init(_ status: srtp_err_status_t) {
    self.rawValue = status.rawValue
  }

  private static let names = [
    "ok", "fail", "bad_param", "alloc_fail", "dealloc_fail", "init_fail", "terminus",
    "auth_fail", "cipher_fail", "replay_fail", "replay_old", "algo_fail", "no_such_op",
    "no_ctx", "cant_check", "key_expired", "socket_err", "signal_err", "nonce_bad", "read_fail",
    "write_fail", "parse_err", "encode_err", "semaphore_err", "pfkey_err", "bad_mki",
    "pkt_idx_old", "pkt_idx_adv",
  ]

  /// The libsrtp2 name, e.g. `srtp_err_status_bad_param`.
  public var name: String {
    let index = Int(rawValue)
    return index < Self.names.count ? "srtp_err_status_\(Self.names[index])" : "status \(rawValue)"
  }

  /// The name and value.
  public var description: String { "\(name) (\(rawValue))" }
}

/// Why SRTP/SRTCP processing or session setup failed.
public enum SRTPError: Error, Equatable, Sendable {
  /// The authentication tag did not verify (tampered, wrong key, or not SRTP).
  case authenticationFailed
  /// The packet index was seen before or is older than the replay window (RFC 3711 §3.3.2).
  case replayed
  /// The caller's buffer holds `available` octets but `needed` are required (packet + trailer).
  case bufferTooSmall(needed: Int, available: Int)
  /// The packet is shorter than an RTP (12) or RTCP (8) header plus any trailer.
  case packetTooShort(length: Int)
  /// Master key or salt of the wrong length for the profile.
  case invalidKeyLength(expectedKey: Int, expectedSalt: Int, key: Int, salt: Int)
  /// DTLS keying material of the wrong length for the profile (RFC 5764 §4.2).
  case invalidKeyingMaterialLength(expected: Int, actual: Int)
  /// Protect called on an inbound session or unprotect on an outbound one.
  case wrongDirection
  /// Another libsrtp2 status.
  case library(SRTPStatus)

  init(_ status: srtp_err_status_t) {
    switch status {
    case srtp_err_status_auth_fail: self = .authenticationFailed
    case srtp_err_status_replay_fail, srtp_err_status_replay_old: self = .replayed
    default: self = .library(SRTPStatus(status))
    }
  }
}
