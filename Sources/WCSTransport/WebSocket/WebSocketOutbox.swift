/// Text messages waiting to be written, cut into frames of at most `fragmentSize` bytes
/// (RFC 6455 §5.4: a TEXT frame without FIN, then CONTINUATION frames, the last with FIN).
/// Sans-I/O: the WRITEABLE callback asks it for the next frame and writes that.
struct WebSocketOutbox {
  /// One frame to write.
  struct Frame: Equatable {
    /// Payload bytes of this frame.
    var payload: ArraySlice<UInt8>
    /// `true` for the first frame of a message (opcode TEXT), else CONTINUATION.
    var isFirst: Bool
    /// `true` when this frame ends the message (FIN set).
    var isFinal: Bool
  }

  /// Largest frame payload, in bytes.
  let fragmentSize: Int
  private var messages: [[UInt8]] = []
  private var head = 0
  private var offset = 0
  /// Bytes queued and not yet handed out by `advance()`.
  private(set) var pendingBytes = 0

  /// Creates an empty outbox cutting messages into frames of `fragmentSize` bytes (at least 1).
  init(fragmentSize: Int) { self.fragmentSize = max(1, fragmentSize) }

  /// Whether no frame is waiting.
  var isEmpty: Bool { head >= messages.count }

  /// Queues one message.
  mutating func enqueue(_ message: [UInt8]) {
    messages.append(message)
    pendingBytes += message.count
  }

  /// Drops every queued frame, the one partly written included (for a connection being
  /// closed: nothing more of it will be sent).
  mutating func removeAll() {
    messages = []
    head = 0
    offset = 0
    pendingBytes = 0
  }

  /// The next frame, without removing it; `nil` when empty.
  func peek() -> Frame? {
    guard head < messages.count else { return nil }
    let message = messages[head]
    let end = min(message.count, offset + fragmentSize)
    return Frame(
      payload: message[offset..<end], isFirst: offset == 0, isFinal: end == message.count)
  }

  /// Marks the frame returned by `peek()` as written.
  mutating func advance() {
    guard let frame = peek() else { return }
    pendingBytes -= frame.payload.count
    if frame.isFinal {
      head += 1
      offset = 0
      if head > 64, head * 2 > messages.count {
        messages.removeFirst(head)
        head = 0
      }
    } else {
      offset += frame.payload.count
    }
  }
}
