import Foundation
import TestSupport

/// Hex helpers and corpus access for the ICE tests.
enum STUNTestSupport {
  static func bytes(hex: String) -> [UInt8] {
    var out: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
      let next = hex.index(index, offsetBy: 2)
      out.append(UInt8(hex[index..<next], radix: 16) ?? 0)
      index = next
    }
    return out
  }

  static func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
  }

  /// `../shared/corpus` relative to the package root, when it exists.
  static var corpusDirectory: URL? { SharedCorpus.root }
}
