import Foundation
import WCSMedia
import WCSTransport
import XCTest

@testable import WCSLocalServer

/// Records never replace each other: unique temporary names, suffixed final names.
final class RecordStorageTests: XCTestCase {
  func testUniqueFileNameSuffixesTheStemAndStaysWithinNameMax() {
    XCTAssertEqual(RecordNaming.uniqueFileName("a.webm") { _ in false }, "a.webm")
    let taken: Set = ["a.webm", "a-1.webm"]
    XCTAssertEqual(RecordNaming.uniqueFileName("a.webm") { taken.contains($0) }, "a-2.webm")
    XCTAssertEqual(RecordNaming.uniqueFileName("noext") { $0 == "noext" }, "noext-1")
    let long = String(repeating: "n", count: 250) + ".webm"
    let unique = RecordNaming.uniqueFileName(long) { $0 == long }
    XCTAssertEqual(unique.utf8.count, 255)
    XCTAssertTrue(unique.hasSuffix("n-1.webm"), unique)
  }

  /// The engine reports a file finished some time after the stream ended; a record of the
  /// same name ending before that must not take the name.
  func testARecordEndingBeforeTheLastOneIsStoredGetsASuffix() throws {
    let core = WCSServerCore()
    let now: Int64 = 1_702_900_000_000
    _ = core.connectionOpened(1, remoteAddress: "127.0.0.1:5000", now: now)
    _ = core.textReceived(1, #"{"message":"connection","data":[{"appKey":"a"}]}"#, now: now)
    func recordName(_ actions: [WCSServerAction]) -> String? {
      for case .media(.releaseMedia(_, let name)) in actions { return name }
      return nil
    }
    var names: [String?] = []
    for _ in 0..<2 {
      _ = core.textReceived(
        1,
        #"{"message":"publishStream","data":[{"mediaSessionId":"pub-1","name":"cam","record":true,"sdp":"v=0"}]}"#,
        now: now)
      names.append(
        recordName(
          core.textReceived(
            1, #"{"message":"unPublishStream","data":[{"mediaSessionId":"pub-1"}]}"#, now: now)))
    }
    XCTAssertEqual(names, ["stream-pub-1-.webm", "stream-pub-1--1.webm"])
  }

  func testANameTheHookSaysExistsIsNotReused() throws {
    var configuration = WCSServerConfiguration()
    configuration.hooks.recordNameTaken = { $0 == "stream-pub-1-.webm" }
    let server = ServerHarness(configuration: configuration)
    server.connect(1)
    server.publish(1, "pub-1", name: "cam", record: true)
    _ = server.take(1)
    server.receive(1, "unPublishStream", ["mediaSessionId": "pub-1", "name": "cam"])
    let status = try XCTUnwrap(server.take(1).last)
    XCTAssertEqual(status.object["recordName"]?.stringValue, "stream-pub-1--1.webm")
  }

  func testTemporaryNamesOfIdsThatLookAlikeDifferAndAreHidden() {
    let directory = FileManager.default.temporaryDirectory.path
    let engine = LocalServerRelayEngine(
      configuration: LocalServerRelayEngine.Configuration(recordsDirectory: directory))
    defer { engine.shutdown() }
    let dotted = engine.temporaryRecordingPath("a.b")
    let underscored = engine.temporaryRecordingPath("a_b")
    XCTAssertNotEqual(dotted, underscored)
    XCTAssertNotEqual(engine.temporaryRecordingPath("a.b"), dotted, "one per recording")
    for path in [dotted, underscored] {
      XCTAssertTrue((path as NSString).lastPathComponent.hasPrefix(".recording-a_b-"), path)
    }
  }

  func testAnExistingFileIsKeptAndTheNewRecordGetsASuffix() throws {
    let directory = try makeTemporaryDirectory("wcs-record-storage")
    defer { try? FileManager.default.removeItem(at: directory) }
    try Data("old".utf8).write(to: directory.appendingPathComponent("x.webm"))
    let temporary = directory.appendingPathComponent(".recording-x.webm").path
    let recording = RelayRecording(temporaryPath: temporary, hasVideo: true, hasAudio: false)
    let encoder = try VP8Encoder(
      configuration: .init(width: 64, height: 48, frameRate: 30, bitrateKbps: 100))
    var packetizer = VP8Packetizer(maxPayloadSize: 1000)
    var sequence: UInt16 = 1
    for index in 0..<3 {
      for frame in try encoder.encode(
        I420Image(width: 64, height: 48, y: 80), timestamp: UInt32(index * 3000))
      {
        for payload in packetizer.packetize(frame) {
          recording.addVideo(
            sequenceNumber: sequence, timestamp: payload.timestamp, marker: payload.marker,
            payload: payload.payload)
          sequence &+= 1
        }
      }
    }
    XCTAssertEqual(
      recording.finish(directory: directory.path, name: "x.webm"), "x-1.webm",
      recording.lastError ?? "")
    XCTAssertEqual(
      try String(contentsOf: directory.appendingPathComponent("x.webm"), encoding: .utf8), "old")
    XCTAssertFalse(FileManager.default.fileExists(atPath: temporary))
    let reader = try MediaFileReader(path: directory.appendingPathComponent("x-1.webm").path)
    var frames = 0
    while let sample = try reader.nextSample() {
      if case .video = sample { frames += 1 }
    }
    XCTAssertEqual(frames, 3)
  }
}
