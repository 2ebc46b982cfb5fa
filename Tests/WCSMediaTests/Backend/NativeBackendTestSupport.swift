import Foundation
import Synchronization
import XCTest

@testable import WCSMedia

/// A value shared between loop/codec threads and the test thread.
final class BackendTestBox<Value: Sendable>: Sendable {
  private let storage: Mutex<Value>

  init(_ value: Value) { storage = Mutex(value) }

  var value: Value { storage.withLock { $0 } }

  func mutate<Result>(_ body: (inout Value) -> Result) -> Result {
    storage.withLock { body(&$0) }
  }
}

/// A minimal SFU on loopback, as `wcs-local-server` is: two ICE-lite answerer
/// PeerConnections, one answering the publisher and one the player, relaying the publisher's
/// RTP to the player and RTCP both ways, SSRCs and payload types unchanged.
final class LoopbackRelay: @unchecked Sendable {
  // @unchecked Sendable: the PeerConnections are used on `loop` only.
  let loop: EventLoop
  private var publisherSide: PeerConnection?
  private var playerSide: PeerConnection?
  let relayedRTP = BackendTestBox(0)
  let relayedRTCP = BackendTestBox(0)

  init(loop: EventLoop) { self.loop = loop }

  private static let configuration = PeerConnectionConfiguration(
    iceLite: true, allowLoopback: true, hostAddresses: [.loopbackV4])

  /// Answers the publisher's offer (receive-only answer).
  func answerPublisher(_ offer: String) throws -> String {
    try loop.submit {
      let connection = PeerConnection(configuration: Self.configuration, loop: loop)
      try connection.setRemoteDescription(offer: offer)
      connection.onRTP = { [weak self] _, packet in
        guard let self else { return }
        _ = self.relayedRTP.mutate { $0 += 1 }
        try? self.playerSide?.sendRTP(packet)
      }
      connection.onRTCP = { [weak self] packet in
        try? self?.playerSide?.sendRTCP(packet)
      }
      publisherSide = connection
      return try connection.createAnswer()
    }
  }

  /// Answers the player's offer (send-only answer).
  func answerPlayer(_ offer: String) throws -> String {
    try loop.submit {
      let connection = PeerConnection(configuration: Self.configuration, loop: loop)
      try connection.setRemoteDescription(offer: offer)
      connection.onRTCP = { [weak self] packet in
        guard let self else { return }
        _ = self.relayedRTCP.mutate { $0 += 1 }
        try? self.publisherSide?.sendRTCP(packet)
      }
      playerSide = connection
      return try connection.createAnswer()
    }
  }

  func close() {
    loop.submit {
      publisherSide?.close()
      playerSide?.close()
    }
  }
}

extension XCTestCase {
  /// Polls `condition` every 20 ms until it holds or `timeout` passes (real network on
  /// loopback: no virtual clock exists for it); fails with `message` on timeout.
  func waitForBackend(
    _ message: String, timeout: TimeInterval = 20, file: StaticString = #filePath,
    line: UInt = #line, _ condition: () -> Bool
  ) {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
      if Date() > deadline {
        XCTFail("timed out: \(message)", file: file, line: line)
        return
      }
      Thread.sleep(forTimeInterval: 0.02)
    }
  }

  /// The offer of `connection`, waited for.
  func offer(of connection: any MediaConnection, file: StaticString = #filePath, line: UInt = #line)
    throws -> String
  {
    let result = BackendTestBox<Result<String, MediaBackendError>?>(nil)
    connection.createOffer { value in result.mutate { $0 = value } }
    waitForBackend("offer", timeout: 10, file: file, line: line) { result.value != nil }
    return try XCTUnwrap(result.value, file: file, line: line).get()
  }

  /// Applies `answer` to `connection`, waited for.
  func apply(answer: String, to connection: any MediaConnection) throws {
    let result = BackendTestBox<Result<Void, MediaBackendError>?>(nil)
    connection.setRemoteAnswer(answer) { value in result.mutate { $0 = value } }
    waitForBackend("answer", timeout: 10) { result.value != nil }
    try XCTUnwrap(result.value).get()
  }
}

/// The dominant frequency of mono PCM by zero crossings, Hz.
func zeroCrossingFrequency(_ samples: [Int16], sampleRate: Int) -> Double {
  var crossings = 0
  for index in 1..<samples.count where (samples[index - 1] < 0) != (samples[index] < 0) {
    crossings += 1
  }
  return Double(crossings) / 2 / (Double(samples.count) / Double(sampleRate))
}
