// Per-packet cost of the RTP send and receive paths for a 1200-octet packet:
// send = write RTP header + SRTP protect, receive = SRTP unprotect + RTP parse,
// with WCSMedia's SRTPSession and with libsrtp2 called directly for comparison.
// Run with `swift run -c release RTPBench [rounds] [header]`. Figures only; nothing here asserts a speed.
import CWebRTCCore
import Foundation
import WCSMedia

let payloadLength = 1200 - 12 - 8
let batch = 4096
/// Rounds of `batch` packets; the first argument overrides it (e.g. 1 under valgrind).
let rounds = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 50
let packets = batch * rounds

struct Slot {
  var bytes: [UInt8]
  var length = 0
}

/// Wall and thread CPU time of one benchmark phase, summed over rounds.
struct Timing {
  var wall = 0.0
  var cpu = 0.0

  /// CPU time of this thread: unlike wall time, it leaves out the time other processes on a
  /// loaded machine hold the core.
  static func threadCPU() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) * 1e9 + Double(spec.tv_nsec)
  }

  static func wallNow() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) * 1e9 + Double(spec.tv_nsec)
  }

  mutating func measure(_ body: () throws -> Void) rethrows {
    let cpuStart = Self.threadCPU()
    let wallStart = Self.wallNow()
    try body()
    wall += Self.wallNow() - wallStart
    cpu += Self.threadCPU() - cpuStart
  }

  func report(_ name: String) {
    let padded = name + String(repeating: " ", count: max(0, 46 - name.count))
    let wallPer = wall / Double(packets)
    let cpuPer = cpu / Double(packets)
    print(
      padded
        + String(format: "wall %6.0f ns   cpu %6.0f ns (%.2f µs)", wallPer, cpuPer, cpuPer / 1000)
    )
  }
}

func makeHeader() -> RTPHeader {
  // A typical WebRTC video header: one-byte extension with a 3-octet element (8 octets).
  RTPHeader(
    marker: false, payloadType: 96, sequenceNumber: 0, timestamp: 0, ssrc: 0x1234_5678,
    headerExtension: .oneByte([RTPHeaderExtensionElement(id: 1, value: [0, 0, 0])]))
}

/// WCSMedia alone, no crypto: header write into a reused buffer, and header parse.
func benchmarkHeaderOnly() throws {
  var header = makeHeader()
  var buffer = [UInt8](repeating: 0xAB, count: 1200)
  var checksum = 0
  var write = Timing()
  try write.measure {
    for _ in 0..<packets {
      header.sequenceNumber &+= 1
      checksum &+= try buffer.withUnsafeMutableBytes { try header.write(to: $0) }
    }
  }
  write.report("RTP header write (no crypto)")
  var parse = Timing()
  try parse.measure {
    for _ in 0..<packets {
      checksum &+= try buffer.withUnsafeBytes { try RTPHeader.parse($0).payloadRange.count }
    }
  }
  parse.report("RTP header parse (no crypto)")
  if checksum == 42 { print("") }  // keeps the work observable
}

/// WCSMedia path for `profile`.
func benchmarkSession(_ profile: SRTPProtectionProfile) throws {
  let key = SRTPMasterKey(
    key: (0..<profile.keyLength).map { UInt8($0) }, salt: (0..<profile.saltLength).map { UInt8($0) }
  )
  let outbound = try SRTPSession(profile: profile, masterKey: key, direction: .outbound)
  let inbound = try SRTPSession(profile: profile, masterKey: key, direction: .inbound)
  var header = makeHeader()
  let headerLength = header.serializedLength
  var slots = (0..<batch).map { _ in
    Slot(bytes: [UInt8](repeating: 0xAB, count: headerLength + payloadLength + 16))
  }
  var send = Timing()
  var receive = Timing()
  var checksum = 0
  for _ in 0..<rounds {
    try send.measure {
      for index in 0..<batch {
        header.sequenceNumber &+= 1
        header.timestamp &+= 3000
        slots[index].length = try slots[index].bytes.withUnsafeMutableBytes { buffer in
          let written = try header.write(to: buffer)
          return try outbound.protectRTP(buffer, length: written + payloadLength)
        }
      }
    }
    try receive.measure {
      for index in 0..<batch {
        let length = slots[index].length
        checksum &+= try slots[index].bytes.withUnsafeMutableBytes { buffer in
          let plain = try inbound.unprotectRTP(buffer, length: length)
          let parsed = try RTPHeader.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<plain]))
          return Int(parsed.header.sequenceNumber) &+ parsed.payloadRange.count
        }
      }
    }
  }
  send.report("\(profile) header+protect")
  receive.report("\(profile) unprotect+parse")
  if checksum == 42 { print("") }
}

/// libsrtp2 alone on the same 1200-octet packets (header bytes patched by hand).
func benchmarkRawLibsrtp(
  _ name: String, setPolicy: (UnsafeMutablePointer<srtp_crypto_policy_t>) -> Void,
  keyLength: Int
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
  let template: [UInt8] = [
    0x90, 96, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 0x56, 0x78, 0xBE, 0xDE, 0, 1, 0x12, 0, 0, 0,
  ]
  var slots = (0..<batch).map { _ in
    Slot(bytes: [UInt8](repeating: 0xAB, count: template.count + payloadLength + 16))
  }
  var send = Timing()
  var receive = Timing()
  var sequence: UInt16 = 0
  var failures = 0
  for _ in 0..<rounds {
    send.measure {
      for index in 0..<batch {
        sequence &+= 1
        slots[index].length = slots[index].bytes.withUnsafeMutableBytes { buffer -> Int in
          for offset in 0..<template.count { buffer[offset] = template[offset] }
          buffer[2] = UInt8(sequence >> 8)
          buffer[3] = UInt8(truncatingIfNeeded: sequence)
          var length = Int32(template.count + payloadLength)
          if srtp_protect(sender, buffer.baseAddress, &length) != srtp_err_status_ok {
            failures += 1
          }
          return Int(length)
        }
      }
    }
    receive.measure {
      for index in 0..<batch {
        var length = Int32(slots[index].length)
        slots[index].bytes.withUnsafeMutableBytes { buffer in
          if srtp_unprotect(receiver, buffer.baseAddress, &length) != srtp_err_status_ok {
            failures += 1
          }
        }
      }
    }
  }
  send.report("raw libsrtp \(name) protect")
  receive.report("raw libsrtp \(name) unprotect")
  if failures > 0 { print("  \(failures) libsrtp failures") }
}

print(
  "RTPBench: \(packets) packets of 1200 octets per figure, "
    + "\(String(cString: srtp_get_version_string())), \(ProcessInfo.processInfo.activeProcessorCount) cores"
)
do {
  try benchmarkHeaderOnly()
  // `RTPBench <rounds> header` stops here, e.g. to count allocations under valgrind.
  if CommandLine.arguments.dropFirst(2).first == "header" { exit(0) }
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
