import WCSLocalServer
import XCTest

/// `stream_record_policy_template` expansion (wcs-protocol.md §6).
final class RecordNamingTests: XCTestCase {
  // 2023-12-18 11:46:40.123 UTC
  let start: Int64 = 1_702_900_000_123
  var context: RecordNaming.Context {
    RecordNaming.Context(
      streamName: "cam1", mediaSessionId: "0f8b6a10", login: "alice",
      sessionId: "/1.2.3.4:5/6.7.8.9:8080",
      startMillis: start, endMillis: start + 61_500, audioCodec: "opus", videoCodec: "VP8")
  }

  func testDefaultTemplateAsInTheDocs() {
    XCTAssertEqual(RecordNaming.defaultTemplate, "stream-{mediaSessionId}-{login}")
    var noLogin = context
    noLogin.login = ""
    XCTAssertEqual(
      RecordNaming.fileName(
        template: RecordNaming.defaultTemplate, fileExtension: "webm", context: noLogin),
      "stream-0f8b6a10-.webm")
    XCTAssertEqual(
      RecordNaming.fileName(
        template: RecordNaming.defaultTemplate, fileExtension: "mp4", context: context),
      "stream-0f8b6a10-alice.mp4")
  }

  func testEveryPlaceholder() {
    XCTAssertEqual(
      RecordNaming.expand(
        "{streamName}|{startTime}|{endTime}|{startTimeMillis}|{endTimeMillis}|{duration}|{audioCodec}|{videoCodec}",
        context: context),
      "cam1|2023-12-18-11-46-40|2023-12-18-11-47-41|1702900000123|1702900061623|61500|opus|VP8")
    // base64url("/1.2.3.4:5/6.7.8.9:8080") without padding.
    XCTAssertEqual(
      RecordNaming.expand("{sessionId}", context: context), "LzEuMi4zLjQ6NS82LjcuOC45OjgwODA")
    XCTAssertEqual(
      RecordNaming.expand("{unknown}-{streamName", context: context), "{unknown}-{streamName")
    var open = context
    open.endMillis = nil
    XCTAssertEqual(RecordNaming.expand("a{endTime}{duration}b", context: open), "ab")
  }

  func testCalendarEdges() {
    var c = context
    c.startMillis = 0
    XCTAssertEqual(RecordNaming.expand("{startTime}", context: c), "1970-01-01-00-00-00")
    c.startMillis = 951_782_400_000  // 2000-02-29 00:00:00 UTC (leap day)
    XCTAssertEqual(RecordNaming.expand("{startTime}", context: c), "2000-02-29-00-00-00")
    c.startMillis = 4_102_444_799_999  // 2099-12-31 23:59:59.999
    XCTAssertEqual(RecordNaming.expand("{startTime}", context: c), "2099-12-31-23-59-59")
  }

  func testFileNamesAreSafe() {
    var c = context
    c.streamName = "../../etc/passwd\u{0}x"
    XCTAssertEqual(
      RecordNaming.fileName(template: "{streamName}", fileExtension: "webm", context: c),
      "_._.._etc_passwd_x.webm")
    c.streamName = ""
    XCTAssertEqual(
      RecordNaming.fileName(template: "{streamName}", fileExtension: "webm", context: c),
      "stream.webm")
    c.streamName = String(repeating: "é", count: 300)
    let long = RecordNaming.fileName(template: "{streamName}", fileExtension: "webm", context: c)
    XCTAssertLessThanOrEqual(long.utf8.count, 255)
    XCTAssertTrue(long.hasSuffix("é.webm"))
    XCTAssertEqual(long.utf8.count, 250 + 5)
  }
}
