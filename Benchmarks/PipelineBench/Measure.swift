import BenchSupport
import Foundation
import Synchronization
import WCSMedia

/// Process CPU time (all threads), seconds.
func processCPUSeconds() -> Double { clockSeconds(CLOCK_PROCESS_CPUTIME_ID) }

/// Voluntary context switches of all the process's threads (`voluntary_ctxt_switches` in
/// `/proc/self/task/*/status`). A thread switches out voluntarily when it goes to sleep (poll,
/// futex, nanosleep), so the difference over a window counts the wake-ups in it. On a virtual
/// machine a wake-up costs tens of µs of CPU (`WakeUpPrice`), so the count explains much of
/// a receiver's CPU beyond its codec calls.
func processWakeUps() -> Int {
  guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else {
    return 0
  }
  var total = 0
  for task in tasks {
    guard
      let status = try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8)
    else { continue }
    for line in status.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:") {
      total += Int(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0
    }
  }
  return total
}

/// What one wake-up costs on this machine: the process CPU per firing of a timer that re-arms
/// itself every `period` on an otherwise idle `EventLoop`, over `span` seconds. 20 ms is the
/// play path's audio turn; the price depends on how long the thread slept (a longer sleep
/// leaves colder caches and, on a virtual machine, a halted virtual CPU to wake).
func measureWakeUpPrice(period: Duration = .milliseconds(20), span: Double) -> Double {
  let run = measureIdleLoop(period: period, span: span, settle: 0.5)
  return run.cpu / Double(max(1, run.wakeUps))
}

/// Runs a timer every `period` on a fresh, otherwise idle `EventLoop`; after `settle` seconds
/// measures `span` seconds: the timer's firings and the process CPU.
func measureIdleLoop(period: Duration, span: Double, settle: Double) -> (wakeUps: Int, cpu: Double)
{
  let loop = EventLoop(label: "PipelineBench.idle")
  let ticker = IdleTicker(loop: loop, period: period)
  loop.execute { ticker.arm() }
  Thread.sleep(forTimeInterval: settle)
  let before = ticker.fired.withLock { $0 }
  let cpuStart = processCPUSeconds()
  Thread.sleep(forTimeInterval: span)
  let cpu = processCPUSeconds() - cpuStart
  let wakeUps = ticker.fired.withLock { $0 } - before
  loop.shutdown()
  return (wakeUps, cpu)
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
/// CPU and memory are not counted in ours; `codec` is what `peer-publisher` sends.
final class PeerProcess {
  // posix_spawn with only the two pipes mapped, rather than Foundation's Process, which closes
  // every other descriptor in the child and so fails under valgrind (its own descriptors).
  private let pid: pid_t
  private let input: FileHandle
  private let output: FileHandle
  private var buffer = Data()

  init(mode: String, codec: BenchCodec = .vp8) throws {
    var toChild: [Int32] = [0, 0]
    var fromChild: [Int32] = [0, 0]
    guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else {
      throw PipelineBenchError.peer("pipe: errno \(errno)")
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
    posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
    for descriptor in toChild + fromChild {
      posix_spawn_file_actions_addclose(&actions, descriptor)
    }
    let executable = CommandLine.arguments[0]
    var argv: [UnsafeMutablePointer<CChar>?] = [
      strdup(executable), strdup(mode), strdup(codec.rawValue), nil,
    ]
    defer { for pointer in argv { free(pointer) } }
    var child = pid_t()
    let status = posix_spawn(&child, executable, &actions, nil, &argv, environ)
    close(toChild[0])
    close(fromChild[1])
    guard status == 0 else {
      close(toChild[1])
      close(fromChild[0])
      throw PipelineBenchError.peer("posix_spawn: \(status)")
    }
    pid = child
    input = FileHandle(fileDescriptor: toChild[1], closeOnDealloc: true)
    output = FileHandle(fileDescriptor: fromChild[0], closeOnDealloc: true)
  }

  /// Writes one line to the peer's stdin.
  func send(_ line: String) {
    input.write(Data((line + "\n").utf8))
  }

  /// Sends `offer`, returns the peer's answer.
  func answer(_ offer: String) throws -> String {
    input.write(Data((SDPLine.encode(offer) + "\n").utf8))
    while true {
      if let newline = buffer.firstIndex(of: 0x0A) {
        let line = String(decoding: buffer[..<newline], as: UTF8.self)
        buffer.removeSubrange(...newline)
        guard let sdp = SDPLine.decode(line) else { throw PipelineBenchError.peer(line) }
        return sdp
      }
      let chunk = output.availableData
      guard !chunk.isEmpty else { throw PipelineBenchError.peer("peer exited") }
      buffer.append(chunk)
    }
  }

  func stop() {
    try? input.close()
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0, errno == EINTR {}
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
