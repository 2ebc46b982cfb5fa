import Foundation
import WCSTransport
import XCTest

@testable import WCSApi2

/// Repeated connect/publish/disconnect must not leak threads, descriptors or objects.
final class LifecycleTests: XCTestCase {
  private struct Weak {
    weak var session: FPWCSApi2Session?
    weak var stream: FPWCSApi2Stream?
    weak var connection: FakeMediaConnection?
    weak var transport: MockTransport?
  }

  /// One full cycle against a scripted server; returns weak references to what it made.
  private func cycle(_ backend: FakeMediaBackend, index: Int) throws -> Weak {
    let transport = MockTransport()
    transport.onSend { [weak transport] text in
      guard let transport, let message = try? WCSMessageCodec.decode(text) else { return }
      switch message.name {
      case "connection":
        transport.push(
          WCSMessage(name: "getUserData", data: [["status": "ESTABLISHED", "authToken": "t"]]))
      case "publishStream":
        let id = message.argument?["mediaSessionId"] ?? nil
        transport.push(
          WCSMessage(name: "setRemoteSDP", data: [id, "v=0\r\nm=audio 1 RTP/SAVPF 111\r\n", true]))
        transport.push(
          WCSMessage(
            name: "notifyStreamStatusEvent", data: [["mediaSessionId": id, "status": "PUBLISHING"]])
        )
      default: break
      }
    }
    let options = FPWCSApi2SessionOptions()
    options.urlServer = "ws://127.0.0.1:8080/"
    options.signalingTransport = transport
    options.mediaBackend = backend
    let session = try WCSSession(options)
    let published = expectation(description: "publishing \(index)")
    let disconnected = expectation(description: "disconnected \(index)")
    session.on(.fpwcsSessionStatusEstablished) { s in
      let streamOptions = FPWCSApi2StreamOptions()
      streamOptions.name = "cycle-\(index)"
      do {
        guard let stream = try s?.createStream(streamOptions) else { return XCTFail("no session") }
        stream.on(.fpwcsStreamStatusPublishing) { _ in published.fulfill() }
        try stream.publish()
      } catch {
        XCTFail("\(error)")
      }
    }
    session.on(.fpwcsSessionStatusDisconnected) { _ in disconnected.fulfill() }
    session.connect()
    wait(for: [published], timeout: 5)
    var refs = Weak()
    refs.session = session.session
    let stream = session.getStreams().first?.stream
    refs.stream = stream
    refs.connection = backend.connections.last
    refs.transport = transport
    XCTAssertNotNil(refs.stream)
    session.disconnect()
    wait(for: [disconnected], timeout: 5)
    XCTAssertEqual(stream?.getStatus(), .fpwcsStreamStatusFailed)
    XCTAssertTrue(backend.connections.last?.isClosed ?? false)
    backend.state.withLock { $0.connections.removeAll() }
    return refs
  }

  func testHundredCyclesLeakNothing() throws {
    let backend = FakeMediaBackend()
    var refs: [Weak] = []
    // Warm up: lets Dispatch grow its worker pool to its working size.
    for i in 0..<5 { refs.append(try cycle(backend, index: i)) }
    let threadsBefore = ProcessCounters.threads
    let fdsBefore = ProcessCounters.fileDescriptors
    for i in 5..<105 { refs.append(try cycle(backend, index: i)) }
    // Callbacks already queued may still hold the last objects for a moment.
    DispatchQueue.global().sync {}
    let threadsAfter = ProcessCounters.threads
    let fdsAfter = ProcessCounters.fileDescriptors
    XCTAssertGreaterThan(threadsBefore, 0)
    // Dispatch's worker pool breathes by a few threads (idle workers exit only after seconds), so
    // the bound is a constant far below the cycle count: a thread kept per session or stream
    // would add at least 100.
    XCTAssertLessThan(
      threadsAfter - threadsBefore, 30, "threads grew from \(threadsBefore) to \(threadsAfter)")
    XCTAssertEqual(fdsAfter, fdsBefore, "file descriptors grew from \(fdsBefore) to \(fdsAfter)")
    let alive = refs.filter {
      $0.session != nil || $0.stream != nil || $0.connection != nil || $0.transport != nil
    }
    XCTAssertLessThanOrEqual(
      alive.count, 1, "\(alive.count) of \(refs.count) cycles left objects alive")
    XCTAssertTrue(refs.dropLast().allSatisfy { $0.session == nil && $0.stream == nil })
    XCTAssertFalse(FPWCSApi2.getSessions().contains { s in refs.contains { $0.session === s } })
  }
}
