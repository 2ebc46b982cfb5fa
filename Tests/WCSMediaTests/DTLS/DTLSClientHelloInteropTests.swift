import XCTest

@testable import WCSMedia

/// Browsers may offer DTLS 1.3 (supported_versions) and post-quantum key shares in their
/// ClientHello; OpenSSL 3.0 cannot produce such a hello, so this test grafts those extensions
/// onto a real one and checks our server still answers with a DTLS 1.2 ServerHello.
final class DTLSClientHelloInteropTests: XCTestCase {
  func testServerAnswersDTLS13AndPostQuantumOfferWithDTLS12() throws {
    let (link, _, _) = try DTLSTestLink.make()
    let clientHello = try XCTUnwrap(link.client.start(now: link.now).datagrams.first)

    let x25519MLKEM768: [UInt8] = [0x11, 0xEC]
    let x25519: [UInt8] = [0x00, 0x1D]
    let shares =
      x25519MLKEM768 + be16(1216) + [UInt8](repeating: 0x5A, count: 1216)
      + x25519 + be16(32) + [UInt8](repeating: 0x33, count: 32)
    let extra: [UInt8] =
      // supported_versions (43): DTLS 1.3 (0xFEFC), DTLS 1.2 (0xFEFD), RFC 9147 §5.3
      [0x00, 0x2B] + be16(5) + [4, 0xFE, 0xFC, 0xFE, 0xFD]
      // psk_key_exchange_modes (45): psk_dhe_ke
      + [0x00, 0x2D] + be16(2) + [1, 1]
      // key_share (51) with an X25519MLKEM768 and an X25519 share, RFC 8446 §4.2.8
      + [0x00, 0x33] + be16(shares.count + 2) + be16(shares.count) + shares

    let datagrams = try graft(extensions: extra, onto: clientHello, fragmentSize: 700)
    XCTAssertEqual(datagrams.count, 3)
    var replies: [[UInt8]] = []
    for datagram in datagrams {
      let output = link.server.receive(datagram, now: link.now)
      XCTAssertEqual(output.events, [], "\(output.events)")
      replies += output.datagrams
    }
    let serverHello = try XCTUnwrap(replies.first)
    XCTAssertGreaterThan(serverHello.count, 27)
    XCTAssertEqual(serverHello[0], 22)
    XCTAssertEqual(serverHello[13], 2, "ServerHello")
    XCTAssertEqual(Array(serverHello[25...26]), [0xFE, 0xFD], "server_version DTLS 1.2")
    XCTAssertEqual(link.server.state, .handshaking)
  }

  private func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }

  private func be24(_ value: Int) -> [UInt8] {
    [UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
  }

  /// Re-encodes a one-record, unfragmented ClientHello with `extensions` appended, split into
  /// handshake fragments of at most `fragmentSize` body bytes, one record per datagram.
  private func graft(extensions: [UInt8], onto hello: [UInt8], fragmentSize: Int) throws
    -> [[UInt8]]
  {
    struct Malformed: Error {}
    func u16(_ at: Int) throws -> Int {
      guard at + 1 < hello.count else { throw Malformed() }
      return Int(hello[at]) << 8 | Int(hello[at + 1])
    }
    guard hello.count > 25, hello[0] == 22, hello[13] == 1 else { throw Malformed() }
    let bodyStart = 25
    var cursor = bodyStart + 2 + 32
    guard cursor < hello.count else { throw Malformed() }
    cursor += 1 + Int(hello[cursor])  // session_id
    guard cursor < hello.count else { throw Malformed() }
    cursor += 1 + Int(hello[cursor])  // cookie
    cursor += 2 + (try u16(cursor))  // cipher_suites
    guard cursor < hello.count else { throw Malformed() }
    cursor += 1 + Int(hello[cursor])  // compression_methods
    let extensionsLength = try u16(cursor)
    guard cursor + 2 + extensionsLength == hello.count else { throw Malformed() }

    let body =
      Array(hello[bodyStart..<cursor]) + be16(extensionsLength + extensions.count)
      + Array(hello[(cursor + 2)...]) + extensions
    let messageSequence = Array(hello[17...18])
    var datagrams: [[UInt8]] = []
    var offset = 0
    while offset < body.count {
      let length = min(fragmentSize, body.count - offset)
      let fragment =
        [1] + be24(body.count) + messageSequence + be24(offset) + be24(length)
        + Array(body[offset..<(offset + length)])
      let sequence: [UInt8] = [0, 0, 0, 0, 0, UInt8(datagrams.count)]
      datagrams.append(Array(hello[0...4]) + sequence + be16(fragment.count) + fragment)
      offset += length
    }
    return datagrams
  }
}
