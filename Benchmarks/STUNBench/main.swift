// Measures one ICE connectivity check round through the STUN codec: encode a Binding request
// (USERNAME, PRIORITY, ICE-CONTROLLING, USE-CANDIDATE, MESSAGE-INTEGRITY, FINGERPRINT), decode
// it (fingerprint checked) and verify its integrity. Goal: at most 2 µs per round.
// Reports wall time and thread CPU time: on a shared machine the CPU time is the fairer figure.
import Foundation
import WCSMedia

let key = STUNIntegrityKey(shortTermPassword: "passwordB-0123456789abcd")
let attributes: [STUNAttribute] = [
  .username("ufB2:ufA1"), .priority(1_853_817_087), .iceControlling(0x1234_5678_9ABC_DEF0),
  .useCandidate,
]
let transactionID = STUNTransactionID(high: 0x0102_0304, low: 0x0506_0708_090A_0B0C)

func round() throws -> Int {
  let request = STUNMessage(
    type: .bindingRequest, transactionID: transactionID, attributes: attributes)
  let bytes = try request.encode(key: key, fingerprint: true)
  let decoded = try STUNMessage.decode(bytes)
  try decoded.verifyIntegrity(key: key)
  return bytes.count + decoded.attributes.count
}

func seconds(_ clock: clockid_t) -> Double {
  var time = timespec()
  clock_gettime(clock, &time)
  return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Best-of-`repeats` nanoseconds per call, wall and thread CPU.
func measure(_ name: String, repeats: Int = 5, iterations: Int = 200_000, _ body: () throws -> Int)
  rethrows
{
  var sink = 0
  for _ in 0..<(iterations / 10) { sink &+= try body() }
  var bestWall = Double.infinity
  var bestCPU = Double.infinity
  for _ in 0..<repeats {
    let wall = seconds(CLOCK_MONOTONIC)
    let cpu = seconds(CLOCK_THREAD_CPUTIME_ID)
    for _ in 0..<iterations { sink &+= try body() }
    bestWall = min(bestWall, (seconds(CLOCK_MONOTONIC) - wall) * 1e9 / Double(iterations))
    bestCPU = min(bestCPU, (seconds(CLOCK_THREAD_CPUTIME_ID) - cpu) * 1e9 / Double(iterations))
  }
  let padded = name.padding(toLength: 44, withPad: " ", startingAt: 0)
  print("\(padded) \(Int(bestCPU)) ns/op CPU, \(Int(bestWall)) ns/op wall (sink \(sink & 1))")
}

let encoded = try STUNMessage(
  type: .bindingRequest, transactionID: transactionID, attributes: attributes
).encode(key: key, fingerprint: true)
let decoded = try STUNMessage.decode(encoded)

print("STUNBench: best of 5 x 200000, \(encoded.count)-byte Binding request")
try measure("encode + decode + integrity + fingerprint") { try round() }
try measure("  encode (MESSAGE-INTEGRITY, FINGERPRINT)") {
  try STUNMessage(type: .bindingRequest, transactionID: transactionID, attributes: attributes)
    .encode(key: key, fingerprint: true).count
}
try measure("  decode (FINGERPRINT checked)") { try STUNMessage.decode(encoded).attributes.count }
try measure("  verify MESSAGE-INTEGRITY") {
  try decoded.verifyIntegrity(key: key)
  return 1
}
