// Per-packet cost of the RTP send and receive paths for a 1200-octet packet:
// send = write RTP header + SRTP protect, receive = SRTP unprotect + RTP parse,
// with WCSMedia's SRTPSession and with libsrtp2 called directly for comparison.
// Run with `swift run -c release RTPBench`. Figures only; nothing here asserts a speed.
import CWebRTCCore
import WCSMedia

let payloadLength = 1200 - 12
let batch = 4096
let rounds = 50

struct Slot {
  var bytes: [UInt8]
  var length = 0
}

func nanoseconds(_ duration: Duration) -> Double {
  let parts = duration.components
  return Double(parts.seconds) * 1e9 + Double(parts.attoseconds) / 1e9
}

func report(_ name: String, _ total: Duration, packets: Int) {
  let perPacket = nanoseconds(total) / Double(packets)
  let padded = name + String(repeating: " ", count: max(0, 46 - name.count))
  print("\(padded) \(Int(perPacket.rounded())) ns/packet  (\(perPacket / 1000) µs)")
}

/// WCSMedia path for `profile`.
func benchmarkSession(_ profile: SRTPProtectionProfile) throws {
  let key = SRTPMasterKey(
    key: (0..<profile.keyLength).map { UInt8($0) }, salt: (0..<profile.saltLength).map { UInt8($0) }
  )
  let outbound = try SRTPSession(profile: profile, masterKey: key, direction: .outbound)
  let inbound = try SRTPSession(profile: profile, masterKey: key, direction: .inbound)
  var header = RTPHeader(
    marker: false, payloadType: 96, sequenceNumber: 0, timestamp: 0, ssrc: 0x1234_5678,
    headerExtension: .oneByte([RTPHeaderExtensionElement(id: 1, value: [0, 0, 0])]))
  let headerLength = header.serializedLength
  var slots = (0..<batch).map { _ in
    Slot(bytes: [UInt8](repeating: 0xAB, count: headerLength + payloadLength + 16))
  }
  let clock = ContinuousClock()
  var send = Duration.zero
  var receive = Duration.zero
  var checksum = 0
  for _ in 0..<rounds {
    let sendStart = clock.now
    for index in 0..<batch {
      header.sequenceNumber &+= 1
      header.timestamp &+= 3000
      slots[index].length = try slots[index].bytes.withUnsafeMutableBytes { buffer in
        let written = try header.write(to: buffer)
        return try outbound.protectRTP(buffer, length: written + payloadLength)
      }
    }
    send += clock.now - sendStart
    let receiveStart = clock.now
    for index in 0..<batch {
      let length = slots[index].length
      checksum &+= try slots[index].bytes.withUnsafeMutableBytes { buffer in
        let plain = try inbound.unprotectRTP(buffer, length: length)
        let parsed = try RTPHeader.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<plain]))
        return Int(parsed.header.sequenceNumber) &+ parsed.payloadRange.count
      }
    }
    receive += clock.now - receiveStart
  }
  let packets = batch * rounds
  report("\(profile) header+protect", send, packets: packets)
  report("\(profile) unprotect+parse", receive, packets: packets)
  if checksum == 42 { print("") }  // keep the work observable
}

/// libsrtp2 alone: a fixed 12-octet header with the sequence number patched in.
func benchmarkRawLibsrtp(
  _ name: String, setPolicy: (UnsafeMutablePointer<srtp_crypto_policy_t>) -> Void, keyLength: Int
) {
  _ = srtp_init()
  var keyBytes = (0..<keyLength).map { UInt8($0) }
  func create(_ type: srtp_ssrc_type_t) -> OpaquePointer? {
    var policy = srtp_policy_t()
    setPolicy(&policy.rtp)
    setPolicy(&policy.rtcp)
    policy.ssrc.type = type
    var session: OpaquePointer?
    keyBytes.withUnsafeMutableBufferPointer { key in
      policy.key = key.baseAddress
      _ = srtp_create(&session, &policy)
    }
    return session
  }
  guard let sender = create(ssrc_any_outbound), let receiver = create(ssrc_any_inbound) else {
    print("\(name): srtp_create failed")
    return
  }
  defer {
    srtp_dealloc(sender)
    srtp_dealloc(receiver)
  }
  var slots = (0..<batch).map { _ in
    Slot(bytes: [UInt8](repeating: 0xAB, count: 12 + payloadLength + 16))
  }
  let template: [UInt8] = [0x80, 96, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 0x56, 0x78]
  let clock = ContinuousClock()
  var send = Duration.zero
  var receive = Duration.zero
  var sequence: UInt16 = 0
  var failures = 0
  for _ in 0..<rounds {
    let sendStart = clock.now
    for index in 0..<batch {
      sequence &+= 1
      slots[index].length = slots[index].bytes.withUnsafeMutableBytes { buffer -> Int in
        for offset in 0..<12 { buffer[offset] = template[offset] }
        buffer[2] = UInt8(sequence >> 8)
        buffer[3] = UInt8(truncatingIfNeeded: sequence)
        var length = Int32(12 + payloadLength)
        if srtp_protect(sender, buffer.baseAddress, &length) != srtp_err_status_ok { failures += 1 }
        return Int(length)
      }
    }
    send += clock.now - sendStart
    let receiveStart = clock.now
    for index in 0..<batch {
      var length = Int32(slots[index].length)
      slots[index].bytes.withUnsafeMutableBytes { buffer in
        if srtp_unprotect(receiver, buffer.baseAddress, &length) != srtp_err_status_ok {
          failures += 1
        }
      }
    }
    receive += clock.now - receiveStart
  }
  let packets = batch * rounds
  report("raw libsrtp \(name) protect", send, packets: packets)
  report("raw libsrtp \(name) unprotect", receive, packets: packets)
  if failures > 0 { print("  \(failures) libsrtp failures") }
}

print(
  "RTPBench: \(batch * rounds) packets of 1200 octets per figure, libsrtp \(String(cString: srtp_get_version_string()))"
)
do {
  try benchmarkSession(.aeadAES128GCM)
  benchmarkRawLibsrtp(
    "AEAD_AES_128_GCM", setPolicy: { wcs_srtp_policy_aead_aes_128_gcm($0) }, keyLength: 28)
  try benchmarkSession(.aes128CMHMACSHA1_80)
  benchmarkRawLibsrtp(
    "AES_CM_128_HMAC_SHA1_80", setPolicy: { wcs_srtp_policy_aes_cm_128_hmac_sha1_80($0) },
    keyLength: 30)
} catch {
  print("benchmark failed: \(error)")
}
