import Foundation
import TestSupport
import XCTest

/// A JSON value decoded without losing 64-bit unsigned integers (the corpus has NTP timestamps
/// above Int64.max).
enum CorpusJSON: Decodable, Equatable {
  case string(String)
  case unsigned(UInt64)
  case signed(Int64)
  case double(Double)
  case bool(Bool)
  case array([CorpusJSON])
  case object([String: CorpusJSON])
  case null

  init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      self = .null
    } else if let value = try? container.decode(Bool.self) {
      self = .bool(value)
    } else if let value = try? container.decode(UInt64.self) {
      self = .unsigned(value)
    } else if let value = try? container.decode(Int64.self) {
      self = .signed(value)
    } else if let value = try? container.decode(Double.self) {
      self = .double(value)
    } else if let value = try? container.decode(String.self) {
      self = .string(value)
    } else if let value = try? container.decode([CorpusJSON].self) {
      self = .array(value)
    } else {
      self = .object(try container.decode([String: CorpusJSON].self))
    }
  }

  subscript(key: String) -> CorpusJSON? {
    if case .object(let object) = self { return object[key] }
    return nil
  }

  var string: String? {
    if case .string(let value) = self { return value }
    return nil
  }

  var uint64: UInt64? {
    switch self {
    case .unsigned(let value): return value
    case .signed(let value): return value >= 0 ? UInt64(value) : nil
    default: return nil
    }
  }

  var int: Int? {
    switch self {
    case .unsigned(let value): return Int(exactly: value)
    case .signed(let value): return Int(exactly: value)
    default: return nil
    }
  }

  var array: [CorpusJSON]? {
    if case .array(let value) = self { return value }
    return nil
  }

  var object: [String: CorpusJSON]? {
    if case .object(let value) = self { return value }
    return nil
  }

  var bool: Bool? {
    if case .bool(let value) = self { return value }
    return nil
  }
}

/// Finds `../shared/corpus` relative to the package root, when that folder exists.
enum Corpus {
  static var root: URL? { SharedCorpus.root }

  /// The corpus file at `path`, or an XCTSkip when the corpus folder is absent.
  static func data(_ path: String) throws -> Data {
    guard let root else { throw XCTSkip("../shared/corpus is not present") }
    return try Data(contentsOf: root.appendingPathComponent(path))
  }

  static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try data(path)) }

  static func json(_ path: String) throws -> CorpusJSON {
    try JSONDecoder().decode(CorpusJSON.self, from: try data(path))
  }
}

/// Hex helpers for test vectors.
enum Hex {
  static func bytes(_ hex: String) -> [UInt8] {
    let digits = Array(hex.lowercased().filter { !$0.isWhitespace }.utf8)
    var bytes: [UInt8] = []
    var index = 0
    while index + 1 < digits.count {
      let pair = String(decoding: digits[index...index + 1], as: UTF8.self)
      bytes.append(UInt8(pair, radix: 16) ?? 0)
      index += 2
    }
    return bytes
  }

  static func string(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
  }
}
