import Foundation
import XCTest

/// Skips the test, with the reason, unless `python3 -c "import <modules>"` succeeds: the Python
/// peers (aiortc, aioice) are optional here, and `make test` installs them.
func skipUnlessPythonImports(_ modules: String...) throws {
  let check = Process()
  check.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  check.arguments = ["python3", "-c", "import " + modules.joined(separator: ", ")]
  check.standardOutput = FileHandle.nullDevice
  check.standardError = FileHandle.nullDevice
  do {
    try check.run()
    check.waitUntilExit()
  } catch {
    throw XCTSkip("python3 is not runnable: \(error)")
  }
  if check.terminationStatus != 0 {
    throw XCTSkip(
      "\(modules.joined(separator: ", ")) not installed (python3 -m pip install aiortc numpy)")
  }
}
