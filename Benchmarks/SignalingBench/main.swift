// Measures how long a signalling connection takes to open: `WebSocketTransport.connect` until
// `.opened`, against a `WebSocketServer` on 127.0.0.1, for ws:// and wss:// (verification off,
// a self-signed certificate made with the `openssl` tool). The first connection of the process
// is reported apart: it pays for loading the TLS trust store once.
// Run: `swift run -c release SignalingBench [connections]` (default 50 per scheme).
import Foundation
import Synchronization
import WCSTransport

let count = CommandLine.arguments.dropFirst().compactMap { Int($0) }.first ?? 50

func now() -> Double {
  var time = timespec()
  clock_gettime(CLOCK_MONOTONIC, &time)
  return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Seconds from `connect` to `.opened`; the connection is closed before returning.
func openOnce(_ url: String, _ options: SignalingConnectOptions) -> Double? {
  let transport = WebSocketTransport()
  let opened = DispatchSemaphore(value: 0)
  let result = Mutex<Bool?>(nil)
  let start = now()
  transport.connect(to: url, options: options) { event in
    switch event {
    case .opened:
      result.withLock { $0 = $0 ?? true }
      opened.signal()
    case .failed(let error):
      FileHandle.standardError.write(Data("connect failed: \(error)\n".utf8))
      result.withLock { $0 = $0 ?? false }
      opened.signal()
    default: break
    }
  }
  _ = opened.wait(timeout: .now() + 10)
  let elapsed = now() - start
  transport.close(code: 1000, reason: "")
  _ = transport.waitUntilStopped(timeout: 10)
  return result.withLock { $0 } == true ? elapsed : nil
}

func makeCertificate(in directory: URL) throws -> (String, String) {
  let certificate = directory.appendingPathComponent("cert.pem").path
  let key = directory.appendingPathComponent("key.pem").path
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
  process.arguments = [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
    "-keyout", key, "-out", certificate, "-days", "1", "-subj", "/CN=127.0.0.1",
  ]
  process.standardOutput = FileHandle.nullDevice
  process.standardError = FileHandle.nullDevice
  try process.run()
  process.waitUntilExit()
  return (certificate, key)
}

func report(_ name: String, _ url: String, _ options: SignalingConnectOptions) {
  var times: [Double] = []
  for _ in 0..<count { if let time = openOnce(url, options) { times.append(time) } }
  guard let first = times.first else {
    print("\(name): no connection opened")
    return
  }
  let rest = times.dropFirst().sorted()
  let median = rest.isEmpty ? first : rest[rest.count / 2]
  let worst = rest.last ?? first
  print(
    String(
      format: "%@: first %.2f ms, then median %.2f ms, worst %.2f ms (%d opened)", name,
      first * 1000, median * 1000, worst * 1000, times.count))
}

let directory = FileManager.default.temporaryDirectory
  .appendingPathComponent("signaling-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let (certificate, key) = try makeCertificate(in: directory)

let plain = WebSocketServer(configuration: .init()) { _ in }
try plain.start()
let secure = WebSocketServer(
  configuration: .init(certificatePath: certificate, privateKeyPath: key)
) { _ in }
try secure.start()
print("SignalingBench: \(count) connections per scheme to 127.0.0.1, connect → opened")
report("ws:// ", plain.url, SignalingConnectOptions(connectTimeout: 10))
report("wss://", secure.url, SignalingConnectOptions(connectTimeout: 10, verifyCertificates: false))
plain.stop()
secure.stop()
