import Foundation
import Synchronization

/// An in-memory `SignalingTransport` for unit tests: it records every message the client sends and
/// lets the test play the server (push frames, close, fail). Events reach the handler on a private
/// serial queue, in order, as a real transport's would reach it on its service thread.
public final class MockTransport: SignalingTransport {
  private struct State {
    var handler: (@Sendable (SignalingEvent) -> Void)?
    var url: String?
    var options: SignalingConnectOptions?
    var sent: [String] = []
    var isOpen = false
    var closeRequests: [(code: Int, reason: String)] = []
    var onSend: (@Sendable (String) -> Void)?
  }

  private let state = Mutex(State())
  private let queue = DispatchQueue(label: "MockTransport.events")
  /// When `true` (default) `connect` reports `.opened` at once; set `false` to open by hand.
  public let opensAutomatically: Bool

  /// Creates a mock; with `opensAutomatically` the connection opens as soon as `connect` is called.
  public init(opensAutomatically: Bool = true) {
    self.opensAutomatically = opensAutomatically
  }

  /// Records the URL and options; opens at once when `opensAutomatically`.
  public func connect(
    to url: String, options: SignalingConnectOptions,
    handler: @escaping @Sendable (SignalingEvent) -> Void
  ) {
    state.withLock {
      $0.handler = handler
      $0.url = url
      $0.options = options
    }
    if opensAutomatically { open() }
  }

  /// Records the text (or fails with `.notConnected` when not open) and calls the `onSend` hook.
  @discardableResult public func send(_ text: String) -> Result<Void, SignalingTransportError> {
    let hook: (@Sendable (String) -> Void)?? = state.withLock {
      guard $0.isOpen else { return nil }
      $0.sent.append(text)
      return .some($0.onSend)
    }
    guard let hook else { return .failure(.notConnected) }
    hook?(text)
    return .success(())
  }

  /// Records the close request; an open mock reports `.closed(code, reason)` to the handler.
  public func close(code: Int, reason: String) {
    let wasOpen = state.withLock {
      $0.closeRequests.append((code, reason))
      let wasOpen = $0.isOpen
      $0.isOpen = false
      return wasOpen
    }
    if wasOpen { deliver(.closed(code: code, reason: reason)) }
  }

  // MARK: the test's side

  /// The URL given to `connect`, if it was called.
  public var connectedURL: String? { state.withLock { $0.url } }
  /// The options given to `connect`.
  public var connectOptions: SignalingConnectOptions? { state.withLock { $0.options } }
  /// Every text message the client sent, oldest first.
  public var sentTexts: [String] { state.withLock { $0.sent } }
  /// Every message the client sent, decoded (frames that do not decode are left out).
  public var sentMessages: [WCSMessage] {
    sentTexts.compactMap { try? WCSMessageCodec.decode($0) }
  }
  /// Close codes the client asked for.
  public var closeCodes: [Int] { state.withLock { $0.closeRequests.map(\.code) } }
  /// Whether the connection is open.
  public var isOpen: Bool { state.withLock { $0.isOpen } }

  /// Called synchronously for each message the client sends (a scripted server).
  public func onSend(_ hook: (@Sendable (String) -> Void)?) { state.withLock { $0.onSend = hook } }

  /// Completes the upgrade: the client gets `.opened`.
  public func open() {
    state.withLock { $0.isOpen = true }
    deliver(.opened)
  }

  /// Pushes one raw text frame from the "server".
  public func push(text: String) { deliver(.text(text)) }

  /// Pushes one encoded message from the "server".
  public func push(_ message: WCSMessage) { push(text: WCSMessageCodec.encode(message)) }

  /// The "server" closes the connection with a code and reason.
  public func simulateClose(code: Int = 1000, reason: String = "") {
    state.withLock { $0.isOpen = false }
    deliver(.closed(code: code, reason: reason))
  }

  /// The connection breaks.
  public func simulateFailure(_ error: SignalingTransportError) {
    state.withLock { $0.isOpen = false }
    deliver(.failed(error))
  }

  /// Waits until every event pushed so far has been handed to the handler.
  public func drain() { queue.sync {} }

  private func deliver(_ event: SignalingEvent) {
    let handler = state.withLock { $0.handler }
    guard let handler else { return }
    queue.async { handler(event) }
  }
}
