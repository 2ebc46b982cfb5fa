import Foundation
import FuzzTargets
import XCTest

/// Replays the committed crash-regression corpus (`FuzzCorpus/<target>/`) through the fuzz
/// targets: every input is handled without a crash or a broken property (round trips stay
/// stable, limits hold), and the `ok-*` seeds, valid inputs, are accepted.
final class FuzzCorpusTests: XCTestCase {
  static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("FuzzCorpus")

  func testEveryTargetHandlesItsCorpus() throws {
    for target in FuzzTarget.allCases {
      let directory = Self.corpus.appendingPathComponent(target.rawValue)
      let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
      XCTAssertTrue(names.contains { $0.hasPrefix("ok-") }, "\(target.rawValue) has no ok- seed")
      for name in names {
        let bytes = try [UInt8](Data(contentsOf: directory.appendingPathComponent(name)))
        do {
          let accepted = try target.run(bytes)
          if name.hasPrefix("ok-") {
            XCTAssertTrue(accepted, "\(target.rawValue)/\(name) was refused")
          }
        } catch {
          XCTFail("\(target.rawValue)/\(name): \(error)")
        }
      }
    }
  }

  /// The seeds made from real encoders and STUN are accepted (they reach the parsers past
  /// the first check); `FUZZ_WRITE_SEEDS=1` writes them into the committed corpus.
  func testSeedsFromRealEncodersAreAccepted() throws {
    let write = ProcessInfo.processInfo.environment["FUZZ_WRITE_SEEDS"] != nil
    var count = 0
    for target in FuzzTarget.allCases {
      for seed in try target.seeds() {
        count += 1
        XCTAssertTrue(try target.run(seed.bytes), "\(target.rawValue)/\(seed.name) was refused")
        guard write else { continue }
        let directory = Self.corpus.appendingPathComponent(target.rawValue)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(seed.bytes).write(to: directory.appendingPathComponent(seed.name))
      }
    }
    XCTAssertEqual(count, 11)
  }

  func testASplitKeepsEveryPiece() {
    let pieces = FuzzTarget.split(Array("a\n\nb\n\n\n\nc".utf8), separator: [0x0A, 0x0A])
    XCTAssertEqual(pieces.map { String(decoding: $0, as: UTF8.self) }, ["a", "b", "", "c"])
  }
}
