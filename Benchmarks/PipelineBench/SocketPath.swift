// `PipelineBench socket-path [seconds]`: the UDP socket path alone, one EventLoopUDPSocket
// sending 1200-octet datagrams to another on 127.0.0.1 (bursts of 32 on a 1 ms timer, both on
// one loop), as process CPU per datagram sent and received: without network emulation (the
// direct path, one nil check per direction), with an emulator that decides inline
// (`loss=1%`), and with one that holds every datagram on the loop's timers (`delay=5ms`).
import Foundation
import Synchronization
import WCSMedia

func runSocketPath(duration: Double) throws -> Never {
  print("socket-path: \(Int(duration)) s per variant, 1200-octet datagrams, 32 per 1 ms timer")
  for spec in ["none", "loss=1%", "delay=5ms"] {
    let emulation = try NetworkEmulation(spec: spec)
    let (datagrams, cpu) = try measureSocketPath(
      emulation: emulation.isIdeal ? nil : emulation, duration: duration)
    print(
      "socket-path: \(spec.padding(toLength: 10, withPad: " ", startingAt: 0)) "
        + "\(datagrams) received, "
        + String(format: "%.2f µs CPU per datagram (send + receive)", cpu / Double(datagrams) * 1e6)
    )
  }
  exit(0)
}

private func measureSocketPath(emulation: NetworkEmulation?, duration: Double) throws -> (
  Int, Double
) {
  let loop = EventLoop(label: "socket-path")
  defer { loop.shutdown() }
  let received = Atomic<Int>(0)
  let payload = [UInt8](repeating: 0x5A, count: 1200)
  let sockets = try loop.submit { () throws -> [EventLoopUDPSocket] in
    let any = ICETransportAddress(ip: .loopbackV4, port: 0)
    let receiver = try EventLoopUDPSocket(loop: loop, bindingTo: any, emulation: emulation) {
      _, _ in received.add(1, ordering: .relaxed)
    }
    let sender = try EventLoopUDPSocket(loop: loop, bindingTo: any, emulation: emulation) {
      _, _ in
    }
    return [sender, receiver]
  }
  let (sender, receiver) = (sockets[0], sockets[1])
  let running = Atomic<Bool>(true)
  loop.submit {
    func burst() {
      guard running.load(ordering: .relaxed) else { return }
      for _ in 0..<32 { _ = try? sender.send(payload, to: receiver.localAddress) }
      loop.schedule(after: .milliseconds(1)) { burst() }
    }
    burst()
  }
  // A second of warm-up, then the measured span.
  Thread.sleep(forTimeInterval: 1)
  let startCPU = processCPUSeconds()
  let startCount = received.load(ordering: .relaxed)
  Thread.sleep(forTimeInterval: duration)
  let count = received.load(ordering: .relaxed) - startCount
  let cpu = processCPUSeconds() - startCPU
  running.store(false, ordering: .relaxed)
  loop.submit {
    sender.close()
    receiver.close()
  }
  return (count, cpu)
}
