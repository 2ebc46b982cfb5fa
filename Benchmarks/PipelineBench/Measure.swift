import Foundation
import Synchronization
import WCSMedia

/// Process CPU time (all threads), seconds: `clock_gettime(CLOCK_PROCESS_CPUTIME_ID)`.
func processCPUSeconds() -> Double {
  var time = timespec()
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
  return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// glibc's `malloc_trim` (not in the Glibc module map), looked up once.
let trimHeap: (@convention(c) (Int) -> Int32)? = dlsym(nil, "malloc_trim").map {
  unsafeBitCast($0, to: (@convention(c) (Int) -> Int32).self)
}

/// Resident set size, bytes: `/proc/self/statm` field 2 × page size, after handing the free
/// heap back to the kernel (`malloc_trim`), so freed blocks are not counted.
func residentBytes() -> Int {
  _ = trimHeap?(0)
  guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else {
    return 0
  }
  let fields = text.split(separator: " ")
  guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
  return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Waits for a completion-handler API.
func wait<T: Sendable>(_ body: (@escaping @Sendable (T) -> Void) -> Void) -> T {
  let box = Mutex<T?>(nil)
  let done = DispatchSemaphore(value: 0)
  body { value in
    box.withLock { $0 = value }
    done.signal()
  }
  done.wait()
  guard let value = box.withLock({ $0 }) else { fatalError("completion without a value") }
  return value
}

/// One SDP per line, base64 (SDP has CRLF line ends), over a child's stdin/stdout.
enum SDPLine {
  static func encode(_ sdp: String) -> String { Data(sdp.utf8).base64EncodedString() }

  static func decode(_ line: String) -> String? {
    Data(base64Encoded: line.trimmingCharacters(in: .whitespacesAndNewlines)).flatMap {
      String(data: $0, encoding: .utf8)
    }
  }
}

/// This executable run again as a peer process (`peer-sink` or `peer-publisher`), so the peer's
/// CPU and memory are not counted in ours.
final class PeerProcess {
  private let process = Process()
  private let input = Pipe()
  private let output = Pipe()
  private var buffer = Data()

  init(mode: String) throws {
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = [mode]
    process.standardInput = input
    process.standardOutput = output
    try process.run()
  }

  /// Sends `offer`, returns the peer's answer.
  func answer(_ offer: String) throws -> String {
    input.fileHandleForWriting.write(Data((SDPLine.encode(offer) + "\n").utf8))
    while true {
      if let newline = buffer.firstIndex(of: 0x0A) {
        let line = String(decoding: buffer[..<newline], as: UTF8.self)
        buffer.removeSubrange(...newline)
        guard let sdp = SDPLine.decode(line) else { throw PipelineBenchError.peer(line) }
        return sdp
      }
      let chunk = output.fileHandleForReading.availableData
      guard !chunk.isEmpty else { throw PipelineBenchError.peer("peer exited") }
      buffer.append(chunk)
    }
  }

  func stop() {
    try? input.fileHandleForWriting.close()
    process.waitUntilExit()
  }
}

enum PipelineBenchError: Error {
  case peer(String)
}

/// Counts rendered pictures and nothing else (the app's own rendering is not the SDK's).
final class CountingRenderer: VideoRenderer {
  let count = Mutex(0)
  func render(_ frame: VideoFrame) { count.withLock { $0 += 1 } }
}
