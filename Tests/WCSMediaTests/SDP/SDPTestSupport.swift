import Foundation
import TestSupport

/// Locates `../shared/corpus/sdp` relative to the package root, when it exists.
enum SDPCorpus {
  static var directory: URL? {
    guard let dir = SharedCorpus.url("sdp") else { return nil }
    var isDir: ObjCBool = false
    guard FileManager.default.fileExists(atPath: dir.path, isDirectory: &isDir), isDir.boolValue
    else { return nil }
    return dir
  }

  static func files() -> [URL] {
    guard let dir = directory,
      let names = try? FileManager.default.contentsOfDirectory(atPath: dir.path)
    else { return [] }
    return names.filter { $0.hasSuffix(".sdp") }.sorted().map { dir.appendingPathComponent($0) }
  }

  /// Every LF is preceded by CR and the text ends with CRLF (checked on bytes: "\r\n" is one
  /// `Character`).
  static func isCRLFOnly(_ text: String) -> Bool {
    let b = Array(text.utf8)
    guard b.count >= 2, b[b.count - 2] == 13, b[b.count - 1] == 10 else { return false }
    for i in b.indices where b[i] == 10 && (i == 0 || b[i - 1] != 13) { return false }
    return true
  }

  static func text(_ name: String) -> String? {
    guard let dir = directory else { return nil }
    return try? String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)
  }
}
