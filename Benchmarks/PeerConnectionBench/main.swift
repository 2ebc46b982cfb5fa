import BenchSupport
// Loopback PeerConnection ↔ PeerConnection connect time (ICE checks + DTLS handshake + SRTP
// keys), both on one event loop, 127.0.0.1. Run: `swift run -c release PeerConnectionBench`.
import Dispatch
import Foundation
import Synchronization
import WCSMedia

/// Connected instants of both sides of one run, written on the loop.
final class Run: Sendable {
  let done = DispatchSemaphore(value: 0)
  let connected = Mutex<Int>(0)
  let failed = Mutex<String?>(nil)
  let selected = Mutex<ContinuousClock.Instant?>(nil)
  let dtlsConnected = Mutex<ContinuousClock.Instant?>(nil)

  func handler() -> PeerConnection.EventHandler {
    { [self] event in
      switch event {
      case .selectedPair:
        selected.withLock { $0 = $0 ?? ContinuousClock.now }
      case .dtlsConnected:
        dtlsConnected.withLock { $0 = $0 ?? ContinuousClock.now }
      case .stateChanged(.connected):
        if connected.withLock({ count in
          count += 1
          return count
        }) == 2 {
          done.signal()
        }
      case .stateChanged(.failed(let error)):
        failed.withLock { $0 = "\(error)" }
        done.signal()
      default: break
      }
    }
  }
}

/// Where one connect went, each phase from the end of the one before.
struct Phases {
  static let names = [
    "offer", "answer", "apply answer", "ICE selected", "DTLS connected", "both connected",
  ]
  var durations: [Duration]
}

/// Connect time of one run, the part until ICE selected a pair and the phases; `nil` if it
/// failed.
func connectOnce(loop: EventLoop, lite: Bool, pacing: Double = 0.02)
  -> (total: Duration, ice: Duration, phases: Phases)?
{
  let run = Run()
  var offerConfiguration = PeerConnectionConfiguration.loopback
  offerConfiguration.icePacingInterval = .seconds(pacing)
  var answerConfiguration = offerConfiguration
  answerConfiguration.iceLite = lite
  let offerer = PeerConnection(configuration: offerConfiguration, loop: loop)
  let answerer = PeerConnection(configuration: answerConfiguration, loop: loop)
  let calls = loop.submit { () -> [ContinuousClock.Instant] in
    offerer.onEvent = run.handler()
    answerer.onEvent = run.handler()
    var instants = [loop.now()]
    do {
      let offer = try offerer.localDescriptionForOffer()
      instants.append(loop.now())
      let answer = try answerer.setRemoteOffer(offer)
      instants.append(loop.now())
      try offerer.setRemoteAnswer(answer)
      instants.append(loop.now())
    } catch {
      run.failed.withLock { $0 = "\(error)" }
      run.done.signal()
    }
    return instants
  }
  let start = calls[0]
  let finished = run.done.wait(timeout: .now() + 10) == .success
  let end = loop.now()
  loop.submit {
    offerer.close()
    answerer.close()
  }
  if let failure = run.failed.withLock({ $0 }) {
    print("run failed: \(failure)")
    return nil
  }
  guard finished, calls.count == 4, let selected = run.selected.withLock({ $0 }),
    let dtls = run.dtlsConnected.withLock({ $0 })
  else { return nil }
  let instants = calls + [selected, dtls, end]
  let phases = Phases(
    durations: (1..<instants.count).map { instants[$0 - 1].duration(to: instants[$0]) })
  return (start.duration(to: end), start.duration(to: selected), phases)
}

func report(_ label: String, lite: Bool, pacing: Double = 0.02, runs: Int, loop: EventLoop) {
  var samples: [Double] = []
  var iceSamples: [Double] = []
  var phaseSamples = Array(repeating: [Double](), count: Phases.names.count)
  for _ in 0..<runs {
    if let duration = connectOnce(loop: loop, lite: lite, pacing: pacing) {
      samples.append(duration.total.milliseconds)
      iceSamples.append(duration.ice.milliseconds)
      for (index, phase) in duration.phases.durations.enumerated() {
        phaseSamples[index].append(phase.milliseconds)
      }
    }
  }
  samples.sort()
  iceSamples.sort()
  guard !samples.isEmpty else {
    print("\(label): no run connected")
    return
  }
  func percentile(_ p: Double) -> Double {
    samples[min(samples.count - 1, Int(Double(samples.count - 1) * p + 0.5))]
  }
  print(
    String(
      format: "%@: %d/%d connected, min %.2f ms, median %.2f ms, p90 %.2f ms, max %.2f ms",
      label, samples.count, runs, samples[0], percentile(0.5), percentile(0.9),
      samples[samples.count - 1]))
  print(
    String(
      format: "    of which ICE until the first selected pair: median %.2f ms",
      iceSamples[iceSamples.count / 2]))
  let table = zip(Phases.names, phaseSamples).map { name, values in
    String(format: "%@ %.2f", name, values.sorted()[values.count / 2])
  }
  print("    phases, median ms each: " + table.joined(separator: " | "))
}

/// RTP through a connected pair: SRTP protect + UDP send + receive + unprotect + delivery,
/// all on one loop thread, in bursts of `burst` packets of `size` bytes.
func throughput(loop: EventLoop, packets: Int, size: Int, burst: Int) {
  let offerer = PeerConnection(configuration: .loopback, loop: loop)
  let answerer = PeerConnection(configuration: .loopback, loop: loop)
  let run = Run()
  let received = Mutex<Int>(0)
  let lastDelivery = Mutex<ContinuousClock.Instant?>(nil)
  let connected: Bool = loop.submit {
    offerer.onEvent = run.handler()
    answerer.onEvent = run.handler()
    answerer.onRTP = { _, _ in
      received.withLock { $0 += 1 }
      lastDelivery.withLock { $0 = ContinuousClock.now }
    }
    do {
      try offerer.setRemoteAnswer(
        try answerer.setRemoteOffer(try offerer.localDescriptionForOffer()))
      return true
    } catch {
      return false
    }
  }
  guard connected, run.done.wait(timeout: .now() + 10) == .success,
    run.failed.withLock({ $0 }) == nil
  else {
    print("throughput: did not connect")
    return
  }
  var packet = [UInt8](repeating: 0xA5, count: size)
  packet[0] = 0x80
  packet[1] = 111
  let clock = ContinuousClock()
  let start = clock.now
  var sent = 0
  while sent < packets {
    let count = min(burst, packets - sent)
    let first = sent
    loop.submit {
      for index in first..<(first + count) {
        packet[2] = UInt8(truncatingIfNeeded: index >> 8)
        packet[3] = UInt8(truncatingIfNeeded: index)
        try? offerer.sendRTP(packet)
      }
    }
    sent += count
  }
  // Everything queued on the loop before this ran; the socket buffer may still hold a few.
  let deadline = clock.now + .seconds(2)
  while received.withLock({ $0 }) < packets && clock.now < deadline { usleep(1000) }
  let end = lastDelivery.withLock { $0 } ?? clock.now
  let elapsed = start.duration(to: end).seconds
  let delivered = received.withLock { $0 }
  print(
    String(
      format: "RTP %d B x %d in bursts of %d: %.0f packets/s delivered (%.1f Mb/s), %d lost",
      size, packets, burst, Double(delivered) / elapsed,
      Double(delivered * size * 8) / elapsed / 1e6, packets - delivered))
  loop.submit {
    offerer.close()
    answerer.close()
  }
}

let loop = EventLoop(label: "PeerConnectionBench")
// Warm-up: makes the shared certificate and the OpenSSL/libsrtp contexts once. The first
// `PeerConnection` starts that in the background (`prepareSecurity`); what is left of it is
// in this connect.
if let first = connectOnce(loop: loop, lite: true) {
  print(
    String(
      format: "first connect of the process (full ↔ lite, with the process-wide set-up): %.2f ms",
      first.total.milliseconds))
}
report("full ICE offerer ↔ full ICE answerer", lite: false, runs: 50, loop: loop)
report("full ICE offerer ↔ ICE-lite answerer", lite: true, runs: 50, loop: loop)
report("full ↔ full, Ta 50 ms (RFC 8445 default)", lite: false, pacing: 0.05, runs: 50, loop: loop)
report("full ↔ full, Ta 5 ms", lite: false, pacing: 0.005, runs: 50, loop: loop)
report("full ↔ lite, Ta 5 ms", lite: true, pacing: 0.005, runs: 50, loop: loop)
throughput(loop: loop, packets: 20_000, size: 1200, burst: 50)
throughput(loop: loop, packets: 20_000, size: 1200, burst: 10)
print("goal: connect (ICE + DTLS) ≤ 30 ms. Facing a full answerer ICE nominates one pacing slot")
print("(Ta, PeerConnectionConfiguration.icePacingInterval, 20 ms default) after the first valid")
print(
  "pair; facing a lite one (the local server) at once. Phases: offer = localDescriptionForOffer,")
print(
  "answer = setRemoteOffer, apply answer = setRemoteAnswer, then each event after the one before.")
loop.shutdown()
