import Foundation

/// Command line of the interop peer:
/// `InteropPeer --pages DIR --scenario NAME [--chromium PATH] [--timeout SECONDS] [--records DIR]`.
struct InteropOptions {
  enum ParseError: Error, CustomStringConvertible {
    case missingValue(String)
    case unknownOption(String)
    case missingOption(String)

    var description: String {
      switch self {
      case .missingValue(let option): return "\(option) needs a value"
      case .unknownOption(let option): return "unknown option \(option)"
      case .missingOption(let option): return "\(option) is required"
      }
    }
  }

  static let usage =
    "usage: InteropPeer --pages DIR --scenario NAME [--chromium PATH] [--timeout SECONDS]"
    + " [--records DIR]"

  /// Directory with `harness.html` and `harness.js`, served over HTTP to Chromium.
  var pagesDirectory: String
  /// Name of the page scenario (`offer`, `loopback`, ...); also selects the Swift side.
  var scenario: String
  var chromiumPath = "/usr/bin/chromium"
  /// Where the WCS server of the `wcs` scenario writes recordings; a temporary directory when nil.
  var recordsDirectory: String?
  /// Upper bound on the Chromium run in seconds, from launch to the page's result.
  var timeout = 30.0

  init(arguments: [String]) throws(ParseError) {
    var values: [String: String] = [:]
    var index = 0
    while index < arguments.count {
      let option = arguments[index]
      guard ["--pages", "--scenario", "--chromium", "--timeout", "--records"].contains(option)
      else {
        throw .unknownOption(option)
      }
      guard index + 1 < arguments.count else { throw .missingValue(option) }
      values[option] = arguments[index + 1]
      index += 2
    }
    guard let pages = values["--pages"] else { throw .missingOption("--pages") }
    guard let scenario = values["--scenario"] else { throw .missingOption("--scenario") }
    pagesDirectory = pages
    self.scenario = scenario
    if let path = values["--chromium"] { chromiumPath = path }
    recordsDirectory = values["--records"]
    if let text = values["--timeout"] {
      guard let seconds = Double(text), seconds > 0 else { throw .missingValue("--timeout") }
      timeout = seconds
    }
  }
}
