import Foundation
import Synchronization
import WCSTransport
import XCTest

@testable import WCSApi2

/// A session on a `MockTransport` and a `FakeMediaBackend`, with helpers to play the server.
final class Harness: @unchecked Sendable {
  // @unchecked Sendable: the recorders are Mutex-protected; the rest is immutable.
  let transport = MockTransport()
  let backend: FakeMediaBackend
  let session: FPWCSApi2Session
  let callbackQueue = DispatchQueue(label: "test.callbacks")
  let sessionStatuses = Locked<[kFPWCSSessionStatus]>([])

  init(
    backend: FakeMediaBackend = FakeMediaBackend(),
    configure: (FPWCSApi2SessionOptions) -> Void = { _ in }
  ) throws {
    self.backend = backend
    let options = FPWCSApi2SessionOptions()
    options.urlServer = "ws://192.168.10.5:8080/"
    options.signalingTransport = transport
    options.mediaBackend = backend
    options.callbackQueue = callbackQueue
    // Stats sampling would overwrite server-reported bitrates mid-test; tests opt in.
    options.bandwidthSampleInterval = 0
    configure(options)
    session = try FPWCSApi2.createSession(options)
    for status in kFPWCSSessionStatus.allCases {
      session.on(status) { [sessionStatuses] s in sessionStatuses.withLock { $0.append(status) } }
    }
  }

  /// Lets every queued event run: transport queue, session work queue, callback queue, a few
  /// rounds because one step can queue the next (offer → send).
  func settle() {
    for _ in 0..<4 {
      transport.drain()
      session.work.sync {}
      callbackQueue.sync {}
    }
  }

  func push(_ name: String, _ data: [JSONValue]) {
    transport.push(WCSMessage(name: name, data: data))
    settle()
  }

  func pushText(_ text: String) {
    transport.push(text: text)
    settle()
  }

  /// Connects and answers `getUserData` (+ `getVersion`), as the server in wcs-protocol.md §8.
  func establish(token: String = "/192.168.10.20:53122/192.168.10.5:8080") {
    session.connect()
    settle()
    push(
      "getUserData",
      [["status": "ESTABLISHED", "authToken": .string(token), "appKey": "defaultApp"]])
    push("getVersion", ["5.2.1780-3f6a2c1e"])
  }

  func sent(_ name: String) -> [[String: JSONValue]] {
    transport.sentMessages.filter { $0.name == name }.compactMap { $0.argument?.objectValue }
  }

  var sentNames: [String] { transport.sentMessages.map(\.name) }

  func streamStatus(
    _ stream: FPWCSApi2Stream, _ status: String, info: String? = nil,
    extra: [String: JSONValue] = [:]
  ) {
    var object: [String: JSONValue] = [
      "mediaSessionId": .string(stream.getStreamID()), "name": .string(stream.getName()),
      "status": .string(status),
    ]
    if let info { object["info"] = .string(info) }
    for (k, v) in extra { object[k] = v }
    push("notifyStreamStatusEvent", [.object(object)])
  }

  func answer(
    _ stream: FPWCSApi2Stream, sdp: String = "v=0\r\nm=audio 31004 RTP/SAVPF 111\r\na=recvonly\r\n"
  ) {
    push("setRemoteSDP", [.string(stream.getStreamID()), .string(sdp), true])
  }

  func makeStream(
    _ name: String, record: Bool = false, constraints: FPWCSApi2MediaConstraints? = nil
  ) throws -> (FPWCSApi2Stream, StatusRecorder) {
    let options = FPWCSApi2StreamOptions()
    options.name = name
    options.record = record
    options.constraints = constraints
    let stream = try session.createStream(options)
    return (stream, StatusRecorder(stream))
  }
}

/// Records every status callback of a stream, in order, and the queue it ran on.
final class StatusRecorder: @unchecked Sendable {
  // @unchecked Sendable: state behind a Mutex.
  let statuses = Locked<[kFPWCSStreamStatus]>([])

  init(_ stream: FPWCSApi2Stream) {
    for status in kFPWCSStreamStatus.allCases {
      stream.on(status) { [statuses] _ in statuses.withLock { $0.append(status) } }
    }
  }

  var all: [kFPWCSStreamStatus] { statuses.withLock { $0 } }
}

/// Threads and open file descriptors of this process (Linux /proc).
enum ProcessCounters {
  static var threads: Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
  }
  static var fileDescriptors: Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
  }

  /// Local ports of this process's UDP sockets, sorted: the sockets among its descriptors
  /// (`socket:[inode]`) matched by inode with `/proc/self/net/udp` and `udp6`.
  static var udpPorts: [Int] {
    let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    var inodes = Set<Substring>()
    for fd in fds {
      guard
        let target = try? FileManager.default.destinationOfSymbolicLink(
          atPath: "/proc/self/fd/\(fd)"),
        target.hasPrefix("socket:[")
      else { continue }
      inodes.insert(Substring(target.dropFirst("socket:[".count).dropLast()))
    }
    var ports: [Int] = []
    for table in ["/proc/self/net/udp", "/proc/self/net/udp6"] {
      let text = (try? String(contentsOfFile: table, encoding: .utf8)) ?? ""
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
      for line in text.split(separator: "\n").dropFirst() {
        let fields = line.split(separator: " ")
        guard fields.count > 9, inodes.contains(fields[9]),
          let colon = fields[1].lastIndex(of: ":"),
          let port = Int(fields[1][fields[1].index(after: colon)...], radix: 16)
        else { continue }
        ports.append(port)
      }
    }
    return ports.sorted()
  }
}

/// A Mutex in a class, so closures can capture it.
final class Locked<Value: Sendable>: Sendable {
  private let mutex: Mutex<Value>
  init(_ value: Value) { mutex = Mutex(value) }
  func withLock<R>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
  var value: Value { mutex.withLock { $0 } }
}
