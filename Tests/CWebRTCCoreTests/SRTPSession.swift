import CWebRTCCore

/// libsrtp2 needs one `srtp_init()` per process; a lazy global makes later calls no-ops.
enum SRTPLibrary {
  static let initStatus: srtp_err_status_t = wcs_srtp_init_once()
}

/// The libsrtp2 status a call returned, when it is not `srtp_err_status_ok`.
struct SRTPStatusError: Error, Equatable {
  let call: String
  let status: srtp_err_status_t
}

/// A test-side wrapper over one libsrtp2 session with a single stream policy.
final class SRTPTestSession {
  enum Profile {
    case aesCM128HMACSHA1_80
    case aesCM256HMACSHA1_80
    case aeadAES128GCM
    case aeadAES256GCM
  }

  private var session: srtp_t?

  /// `keyAndSalt` is master key || master salt; `ssrc` nil means any inbound stream.
  init(profile: Profile, keyAndSalt: [UInt8], ssrc: UInt32?, outbound: Bool) throws {
    guard SRTPLibrary.initStatus == srtp_err_status_ok else {
      throw SRTPStatusError(call: "srtp_init", status: SRTPLibrary.initStatus)
    }
    var policy = srtp_policy_t()
    switch profile {
    case .aesCM128HMACSHA1_80:
      wcs_srtp_policy_aes_cm_128_hmac_sha1_80(&policy.rtp)
      wcs_srtp_policy_aes_cm_128_hmac_sha1_80(&policy.rtcp)
    case .aesCM256HMACSHA1_80:
      srtp_crypto_policy_set_aes_cm_256_hmac_sha1_80(&policy.rtp)
      srtp_crypto_policy_set_aes_cm_256_hmac_sha1_80(&policy.rtcp)
    case .aeadAES128GCM:
      wcs_srtp_policy_aead_aes_128_gcm(&policy.rtp)
      wcs_srtp_policy_aead_aes_128_gcm(&policy.rtcp)
    case .aeadAES256GCM:
      wcs_srtp_policy_aead_aes_256_gcm(&policy.rtp)
      wcs_srtp_policy_aead_aes_256_gcm(&policy.rtcp)
    }
    if let ssrc {
      policy.ssrc.type = ssrc_specific
      policy.ssrc.value = ssrc
    } else {
      policy.ssrc.type = outbound ? ssrc_any_outbound : ssrc_any_inbound
    }
    policy.window_size = 128
    policy.allow_repeat_tx = 0
    var key = keyAndSalt
    var created: srtp_t?
    // libsrtp copies the key material in srtp_create, so the buffer only has to live for the call.
    let status = key.withUnsafeMutableBufferPointer { buffer in
      policy.key = buffer.baseAddress
      return srtp_create(&created, &policy)
    }
    guard status == srtp_err_status_ok else {
      throw SRTPStatusError(call: "srtp_create", status: status)
    }
    session = created
  }

  deinit {
    if let session { srtp_dealloc(session) }
  }

  func protect(_ rtp: [UInt8]) throws -> [UInt8] {
    try run("srtp_protect", rtp) { srtp_protect(session, $0, $1) }
  }

  func unprotect(_ srtp: [UInt8]) throws -> [UInt8] {
    try run("srtp_unprotect", srtp) { srtp_unprotect(session, $0, $1) }
  }

  func protectRTCP(_ rtcp: [UInt8]) throws -> [UInt8] {
    try run("srtp_protect_rtcp", rtcp) { srtp_protect_rtcp(session, $0, $1) }
  }

  func unprotectRTCP(_ srtcp: [UInt8]) throws -> [UInt8] {
    try run("srtp_unprotect_rtcp", srtcp) { srtp_unprotect_rtcp(session, $0, $1) }
  }

  private func run(
    _ call: String, _ packet: [UInt8],
    _ body: (UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>) -> srtp_err_status_t
  ) throws -> [UInt8] {
    // Room for the longest trailer libsrtp may append (tag, MKI, SRTCP index).
    var buffer = packet + [UInt8](repeating: 0, count: Int(SRTP_MAX_TRAILER_LEN))
    var length = Int32(packet.count)
    let status = buffer.withUnsafeMutableBytes { body($0.baseAddress, &length) }
    guard status == srtp_err_status_ok else { throw SRTPStatusError(call: call, status: status) }
    return Array(buffer.prefix(Int(length)))
  }
}
