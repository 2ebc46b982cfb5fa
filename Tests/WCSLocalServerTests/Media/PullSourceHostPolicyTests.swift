import WCSTransport
import XCTest

@testable import WCSLocalServer

/// `WCSServerConfiguration.pullSourceHosts`: which hosts a played `rtsp://`/`rtmp://` name may
/// make the server connect to (loopback only unless configured), checked before any pull.
final class PullSourceHostPolicyTests: XCTestCase {
  func testTheHostOfASourceURLIsLowerCasedWithoutCredentialsPortOrBrackets() {
    XCTAssertEqual(PullSourceName.host(ofURL: "rtsp://user:pw@Camera.LAN:554/x"), "camera.lan")
    XCTAssertEqual(PullSourceName.host(ofURL: "rtmp://127.0.0.1/live/a"), "127.0.0.1")
    XCTAssertEqual(PullSourceName.host(ofURL: "rtsp://[::1]:8554/cam"), "::1")
    XCTAssertNil(PullSourceName.host(ofURL: "rtsp:///cam"))
  }

  private func played(_ name: String, hosts: Set<String>?) throws -> (ServerHarness, WCSMessage?) {
    var configuration = WCSServerConfiguration()
    configuration.pullSourceHosts = hosts
    let server = ServerHarness(configuration: configuration)
    server.connect(1)
    _ = server.take(1)
    server.play(1, "play-1", name: name)
    return (server, server.take(1).last)
  }

  func testByDefaultOnlyLoopbackSourcesArePulled() throws {
    let (refused, status) = try played("rtsp://10.0.0.7:554/cam", hosts: ["127.0.0.1"])
    assertStatus(
      status, "play-1", "FAILED",
      info: "Pulling from host 10.0.0.7 is not allowed (pullSourceHosts)")
    XCTAssertEqual(refused.core.playerCount, 0)

    XCTAssertEqual(
      WCSServerConfiguration().pullSourceHosts, ["127.0.0.1", "localhost", "::1"],
      "the default is loopback only")
    let (allowed, _) = try played("rtsp://localhost:554/cam", hosts: ["127.0.0.1", "localhost"])
    XCTAssertEqual(allowed.core.playerCount, 1, "a loopback source is pulled")
  }

  func testNoListAllowsAnyHostAsAWCSDoes() throws {
    let (server, _) = try played("rtmp://media.example/live/a", hosts: nil)
    XCTAssertEqual(server.core.playerCount, 1)
  }

  func testTheCommandLineTakesAListOrAny() throws {
    guard
      case .run(let listed) = try LocalServerCommandLine.parse(["--pull-hosts", "Cam.lan,10.0.0.7"]),
      case .run(let any) = try LocalServerCommandLine.parse(["--pull-hosts", "any"])
    else { return XCTFail("run configurations") }
    XCTAssertEqual(listed.signaling.pullSourceHosts, ["cam.lan", "10.0.0.7"])
    XCTAssertNil(any.signaling.pullSourceHosts)
  }
}
