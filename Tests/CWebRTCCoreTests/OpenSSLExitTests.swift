import CWebRTCCore
import Foundation
import XCTest

/// A process that exits while another thread is inside OpenSSL exits cleanly: OpenSSL's
/// atexit cleanup (which frees the locks that thread takes) is not registered.
final class OpenSSLExitTests: XCTestCase {
  static let innerVariable = "WCS_OPENSSL_EXIT_INNER"

  func testExitWhileAnotherThreadUsesOpenSSLDoesNotCrash() throws {
    // Without the fix a run crashed about one time in three; ten runs make a pass by luck
    // unlikely (0.7^10 < 3 %).
    for run in 1...10 {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
      process.arguments = ["CWebRTCCoreTests.OpenSSLExitTests/testInnerExitsWhileHashing"]
      process.environment = ProcessInfo.processInfo.environment.merging([
        Self.innerVariable: "1"
      ]) { _, new in new }
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
      process.waitUntilExit()
      XCTAssertEqual(process.terminationReason, .exit, "run \(run): killed by a signal")
      XCTAssertEqual(process.terminationStatus, 0, "run \(run)")
    }
  }

  /// The child of the test above: HMAC-SHA1 and RAND_bytes on a second thread, then `exit(0)`.
  func testInnerExitsWhileHashing() throws {
    guard ProcessInfo.processInfo.environment[Self.innerVariable] == "1" else {
      throw XCTSkip("runs as the child of testExitWhileAnotherThreadUsesOpenSSLDoesNotCrash")
    }
    let started = DispatchSemaphore(value: 0)
    let thread = Thread {
      let key = [UInt8](repeating: 7, count: 16)
      let message = [UInt8](repeating: 1, count: 100)
      var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
      var length: UInt32 = 0
      started.signal()
      while true {
        _ = HMAC(EVP_sha1(), key, Int32(key.count), message, message.count, &digest, &length)
        _ = RAND_bytes(&digest, 12)
      }
    }
    thread.start()
    started.wait()
    usleep(20_000)
    exit(0)
  }
}
