import Foundation
import WCSMediaSeam
import XCTest

@testable import WCSApi2

/// ICE servers and the transport policy in the session and stream options (iOS `mediaConfig`):
/// URIs parsed as RFC 7064/7065 say, bad ones refused naming the entry, and the result carried
/// to the media engine's request, a stream's own settings replacing the session's.
final class ICEServerOptionsTests: XCTestCase {
  func testURIsParseToSchemeHostPortAndTransport() throws {
    let cases: [(String, MediaICEServer.Scheme, String, UInt16, MediaICEServer.Transport)] = [
      ("stun:stun.example.org", .stun, "stun.example.org", 3478, .udp),
      ("stun:192.0.2.1:19302", .stun, "192.0.2.1", 19302, .udp),
      ("turn:turn.example.org", .turn, "turn.example.org", 3478, .udp),
      ("turn:turn.example.org:80?transport=tcp", .turn, "turn.example.org", 80, .tcp),
      ("TURN:127.0.0.1:3478?transport=UDP", .turn, "127.0.0.1", 3478, .udp),
      ("turns:turn.example.org", .turns, "turn.example.org", 5349, .tls),
      ("turns:turn.example.org:443?transport=tcp", .turns, "turn.example.org", 443, .tls),
      ("turn:[2001:db8::1]:3479", .turn, "2001:db8::1", 3479, .udp),
      (" stun:[::1] ", .stun, "::1", 3478, .udp),
    ]
    for (url, scheme, host, port, transport) in cases {
      let server = try MediaICEServer(url: url, username: "u", credential: "p")
      XCTAssertEqual(server.scheme, scheme, url)
      XCTAssertEqual(server.host, host, url)
      XCTAssertEqual(server.port, port, url)
      XCTAssertEqual(server.transport, transport, url)
      XCTAssertEqual(server.username, scheme == .stun ? nil : "u", url)
    }
    XCTAssertEqual(
      try MediaICEServer(url: "turn:h:80?transport=tcp", username: "u", credential: "p")
        .description, "turn:h:80?transport=tcp")
    XCTAssertEqual(try MediaICEServer(url: "stun:[::1]").description, "stun:[::1]:3478")
  }

  func testBadURIsSayWhatIsWrong() {
    let cases: [(String, String)] = [
      ("turn.example.org", "no scheme"),
      ("http://example.org", "unsupported scheme 'http' (stun:, turn: or turns:)"),
      ("stuns:example.org", "unsupported scheme 'stuns' (stun:, turn: or turns:)"),
      ("turn://example.org", "no '//' after the scheme (RFC 7064/7065: 'turn:host:port')"),
      ("turn:", "empty host"),
      ("turn::3478", "empty host"),
      ("turn:example.org:0", "port '0' is not in 1...65535"),
      ("turn:example.org:65536", "port '65536' is not in 1...65535"),
      ("turn:example.org:http", "port 'http' is not in 1...65535"),
      ("turn:2001:db8::1", "more than one ':' (write IPv6 hosts in brackets)"),
      ("turn:[2001:db8::1", "IPv6 literal without ']'"),
      ("turn:ex ample.org", "host 'ex ample.org' has characters a host name cannot have"),
      ("turn:example.org?transport=sctp", "transport 'sctp' is neither udp nor tcp"),
      ("turn:example.org?proto=tcp", "query 'proto=tcp' is not 'transport=udp' or 'transport=tcp'"),
      (
        "turns:example.org?transport=udp",
        "turns: over UDP (DTLS) is not supported; use transport=tcp"
      ),
      ("stun:example.org?transport=udp", "stun: takes no query"),
    ]
    for (url, reason) in cases {
      XCTAssertThrowsError(try MediaICEServer(url: url, username: "u", credential: "p"), url) {
        XCTAssertEqual($0 as? MediaICEServerError, MediaICEServerError(url, reason), url)
      }
    }
    XCTAssertThrowsError(try MediaICEServer(url: "turn:example.org", username: "u")) {
      XCTAssertEqual(
        "\($0)", "bad ICE server URL 'turn:example.org': TURN needs a username and a credential")
    }
  }

  func testSessionServersReachTheEngineAndAStreamMayReplaceThem() throws {
    let h = try Harness { options in
      options.iceServers = [
        FPWCSApi2IceServer(url: "stun:127.0.0.1:3478"),
        FPWCSApi2IceServer(
          urls: ["turn:127.0.0.1:3478", "turns:turn.test:443?transport=tcp"], username: "user",
          credential: "secret"),
      ]
      options.iceTransportPolicy = .relay
    }
    h.establish()
    let (inherited, _) = try h.makeStream("cam")
    try inherited.publish()
    h.settle()
    let own = FPWCSApi2StreamOptions()
    own.name = "other"
    own.iceServers = [
      FPWCSApi2IceServer(url: "turn:10.0.0.1?transport=tcp", username: "a", credential: "b")
    ]
    let replaced = try h.session.createStream(own)
    try replaced.play()
    h.settle()
    let none = FPWCSApi2StreamOptions()
    none.name = "direct"
    none.iceServers = []
    none.iceTransportPolicy = .all
    try h.session.createStream(none).play()
    h.settle()

    let requests = h.backend.requests
    XCTAssertEqual(requests.count, 3)
    XCTAssertEqual(
      requests[0].iceServers,
      [
        MediaICEServer(scheme: .stun, host: "127.0.0.1", port: 3478, transport: .udp),
        MediaICEServer(
          scheme: .turn, host: "127.0.0.1", port: 3478, transport: .udp, username: "user",
          credential: "secret"),
        MediaICEServer(
          scheme: .turns, host: "turn.test", port: 443, transport: .tls, username: "user",
          credential: "secret"),
      ])
    XCTAssertEqual(requests[0].iceTransportPolicy, .relay)
    XCTAssertEqual(
      requests[1].iceServers,
      [
        MediaICEServer(
          scheme: .turn, host: "10.0.0.1", port: 3478, transport: .tcp, username: "a",
          credential: "b")
      ])
    XCTAssertEqual(
      requests[1].iceTransportPolicy, .relay, "the policy still comes from the session")
    XCTAssertEqual(requests[2].iceServers, [])
    XCTAssertEqual(requests[2].iceTransportPolicy, .all)
  }

  func testWithoutICEOptionsTheEngineDecides() throws {
    let h = try Harness()
    h.establish()
    let (stream, _) = try h.makeStream("cam")
    try stream.publish()
    h.settle()
    XCTAssertEqual(h.backend.requests.count, 1)
    XCTAssertNil(h.backend.requests[0].iceServers)
    XCTAssertNil(h.backend.requests[0].iceTransportPolicy)
  }

  func testABadServerURIRefusesTheSessionOrStreamNamingTheEntry() throws {
    let options = FPWCSApi2SessionOptions()
    options.urlServer = "ws://127.0.0.1:8080"
    options.mediaBackend = FakeMediaBackend()
    options.iceServers = [
      FPWCSApi2IceServer(url: "stun:127.0.0.1"),
      FPWCSApi2IceServer(
        urls: ["turn:127.0.0.1", "turn:127.0.0.1:99999"], username: "u", credential: "p"),
    ]
    XCTAssertThrowsError(try FPWCSApi2.createSession(options)) {
      XCTAssertEqual(
        $0 as? WCSError,
        .invalidOption(
          field: "iceServers[1].urls[1]",
          reason: "bad ICE server URL 'turn:127.0.0.1:99999': port '99999' is not in 1...65535"))
    }
    options.iceServers = [FPWCSApi2IceServer(urls: [])]
    XCTAssertThrowsError(try FPWCSApi2.createSession(options)) {
      XCTAssertEqual($0 as? WCSError, .invalidOption(field: "iceServers[0].urls", reason: "no URL"))
    }

    let h = try Harness()
    let stream = FPWCSApi2StreamOptions()
    stream.name = "cam"
    stream.iceServers = [FPWCSApi2IceServer(url: "turn:127.0.0.1")]
    XCTAssertThrowsError(try h.session.createStream(stream)) {
      XCTAssertEqual(
        $0 as? WCSError,
        .invalidOption(
          field: "iceServers[0].urls[0]",
          reason: "bad ICE server URL 'turn:127.0.0.1': TURN needs a username and a credential"))
    }
  }
}
