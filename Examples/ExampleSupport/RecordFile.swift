import Foundation
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A record downloaded from the server (`<records URL>/<record name>`) and checked.
public struct RecordFile: Sendable {
  /// Where it was saved.
  public var path: String
  /// Its size in bytes.
  public var bytes: Int
  /// Duration in seconds from ffprobe, `nil` when ffprobe is not installed.
  public var duration: Double?
  /// What was checked: `"ffprobe"` or `"WebM header"`.
  public var checkedBy: String

  /// Downloads `recordName` from `recordsURL` into `directory`, retrying for `timeout` seconds
  /// (the server finishes the file after the stream stops), then checks it.
  /// - Throws: `ExampleError.failed` when it cannot be downloaded or is not a valid WebM file.
  public static func download(
    recordName: String, recordsURL: String, directory: String, timeout: Double = 10,
    log: ExampleLog
  ) throws(ExampleError) -> RecordFile {
    let name =
      recordName.hasSuffix(".webm") || recordName.contains(".") ? recordName : recordName + ".webm"
    guard let url = URL(string: recordsURL + name) else {
      throw .failed("bad record URL \(recordsURL + name)")
    }
    let deadline = log.elapsed + timeout
    var lastError = "not tried"
    while log.elapsed < deadline {
      switch fetch(url) {
      case .success(let data) where data.count > 0:
        let path = directory + "/" + (name.split(separator: "/").last.map(String.init) ?? name)
        do {
          try data.write(to: URL(fileURLWithPath: path))
        } catch {
          throw .failed("saving the record to \(path): \(error)")
        }
        log.line("downloaded \(url.absoluteString) (\(data.count) bytes) to \(path)")
        return try check(path: path, bytes: data.count)
      case .success:
        lastError = "empty body"
      case .failure(let error):
        lastError = error.description
      }
      Thread.sleep(forTimeInterval: 0.25)
    }
    throw .failed("downloading the record \(url.absoluteString): \(lastError)")
  }

  /// Checks a WebM file: its duration with ffprobe when installed, else the EBML header with
  /// the `webm` document type.
  /// - Throws: `ExampleError.failed` when it is not a readable WebM file.
  public static func check(path: String, bytes: Int) throws(ExampleError) -> RecordFile {
    if let ffprobe = findExecutable("ffprobe") {
      let output = run(
        ffprobe,
        ["-v", "error", "-show_entries", "format=duration", "-of", "default=nw=1:nk=1", path])
      guard output.status == 0,
        let duration = Double(output.text.trimmingCharacters(in: .whitespacesAndNewlines))
      else {
        throw .failed("ffprobe cannot read the record \(path): \(output.text)")
      }
      return RecordFile(path: path, bytes: bytes, duration: duration, checkedBy: "ffprobe")
    }
    guard let handle = FileHandle(forReadingAtPath: path) else {
      throw .failed("cannot open the record \(path)")
    }
    let head = [UInt8](handle.readData(ofLength: 64))
    try? handle.close()
    let ebml: [UInt8] = [0x1A, 0x45, 0xDF, 0xA3]
    let webm = Array("webm".utf8)
    let hasDocType =
      head.count >= 8 && (0...(head.count - 4)).contains { Array(head[$0..<$0 + 4]) == webm }
    guard head.starts(with: ebml), hasDocType else {
      throw .failed("the record \(path) has no WebM header")
    }
    return RecordFile(path: path, bytes: bytes, duration: nil, checkedBy: "WebM header")
  }

  /// The body of an HTTP GET, or the status/transport error.
  static func fetch(_ url: URL) -> Result<Data, ExampleError> {
    let result = Mutex<Result<Data, ExampleError>>(.failure(.failed("no answer")))
    let done = DispatchSemaphore(value: 0)
    let task = URLSession.shared.dataTask(with: url) { data, response, error in
      let status = (response as? HTTPURLResponse)?.statusCode ?? 0
      let outcome: Result<Data, ExampleError>
      if let error {
        outcome = .failure(.failed("\(error)"))
      } else if status != 200 {
        outcome = .failure(.failed("HTTP \(status)"))
      } else {
        outcome = .success(data ?? Data())
      }
      result.withLock { $0 = outcome }
      done.signal()
    }
    task.resume()
    if done.wait(timeout: .now() + 10) == .timedOut {
      task.cancel()
      return .failure(.failed("timed out"))
    }
    return result.withLock { $0 }
  }

  /// The full path of `name` on `PATH`, `nil` when absent.
  public static func findExecutable(_ name: String) -> String? {
    let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(
      separator: ":")
    for directory in paths {
      let candidate = "\(directory)/\(name)"
      if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
  }

  /// Runs a program to completion; its exit status and standard output plus error.
  public static func run(_ executable: String, _ arguments: [String]) -> (
    status: Int32, text: String
  ) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    do {
      try process.run()
    } catch {
      return (-1, "\(error)")
    }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    return (reap(process), String(decoding: data, as: UTF8.self))
  }

  /// The exit status of `process` once it has ended (-1 when a signal ended it, or when it has
  /// not ended 5 s after closing its output). Reaps it with `waitpid` itself: Foundation's
  /// `waitUntilExit` can miss the exit of a short-lived child and wait forever beside a
  /// zombie (seen with ffprobe after a lossy-network demo run).
  static func reap(_ process: Process) -> Int32 {
    var status: Int32 = 0
    if waitpid(process.processIdentifier, &status, 0) == process.processIdentifier {
      // WIFEXITED / WEXITSTATUS (<sys/wait.h>).
      return status & 0x7f == 0 ? (status >> 8) & 0xff : -1
    }
    // Foundation reaped it first: its status comes shortly.
    let deadline = Date().addingTimeInterval(5)
    while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
    return process.isRunning ? -1 : process.terminationStatus
  }
}
