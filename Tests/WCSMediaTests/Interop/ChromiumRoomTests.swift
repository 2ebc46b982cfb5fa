import Foundation
import XCTest

/// Chromium and a Swift participant in one room through `wcs-local-server`
/// (wcs-rooms-and-calls.md §A): the page speaks the room protocol as the Web SDK's room module
/// does (roomApp session, `sendData` commands, `OnDataEvent` events), the Swift side is the
/// `Conference` example on the SDK's Room API. Each decodes the other's video and gets the
/// other's chat message.
final class ChromiumRoomTests: XCTestCase {
  func testChromiumAndASwiftParticipantSeeAndGreetEachOther() throws {
    let run = try ChromiumInterop.run(scenario: "room", timeout: 40)
    if let error = run.summary["error"] as? String, error.contains("not built") {
      throw XCTSkip("\(error)")
    }
    XCTAssertEqual(run.summary["outcome"] as? String, "result", run.text)
    XCTAssertEqual(run.page["ok"] as? Bool, true, run.text)
    XCTAssertEqual(run.page["joinStatus"] as? String, "ACCEPTED", run.text)

    // The browser decoded the Swift participant's camera (the example's 320x240 default).
    let swiftStream = try XCTUnwrap(run.page["swiftStream"] as? String, run.text)
    XCTAssertTrue(swiftStream.hasPrefix("chromium-room-swift-"), swiftStream)
    XCTAssertEqual(run.string("page", "player", "inbound", "video", "codec"), "video/VP8")
    XCTAssertGreaterThanOrEqual(
      run.int("page", "player", "inbound", "video", "framesDecoded") ?? 0, 20, run.text)
    XCTAssertEqual(run.int("page", "player", "inbound", "video", "frameWidth"), 320, run.text)
    XCTAssertEqual(run.string("page", "message", "from"), "swift", run.text)
    XCTAssertEqual(run.string("page", "message", "text"), "hello browser from swift", run.text)

    // The Swift participant saw the browser, decoded its fake camera and got its message.
    XCTAssertEqual(run.int("peer", "conferenceExitStatus"), 0, run.text)
    XCTAssertEqual(run.string("peer", "conference", "Result"), "OK", run.text)
    XCTAssertEqual(run.string("peer", "conference", "Participants seen"), "browser", run.text)
    let frames = Double(run.string("peer", "conference", "Frames decoded from browser") ?? "") ?? 0
    XCTAssertGreaterThan(frames, 10, run.text)
    XCTAssertEqual(run.string("peer", "conference", "Messages received"), "1", run.text)
    let output = (run.peer["conferenceOutput"] as? [String]) ?? []
    XCTAssertTrue(
      output.contains { $0.contains("message from browser: hello swift from chromium") }, run.text)
    XCTAssertTrue(output.contains { $0.contains("browser left") }, run.text)
  }
}
