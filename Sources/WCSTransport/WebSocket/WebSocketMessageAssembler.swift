/// Joins the pieces libwebsockets hands over (parts of frames, frames of a fragmented message)
/// into whole messages (RFC 6455 §5.4). Sans-I/O: the receive callback feeds it, it returns
/// messages.
struct WebSocketMessageAssembler {
  /// Why a message could not be assembled.
  enum Failure: Error, Equatable {
    /// The message would grow past `maximumSize` bytes.
    case tooLarge(limit: Int)
  }

  /// Largest message accepted, in bytes.
  let maximumSize: Int
  private var buffer: [UInt8] = []
  private var isBinary = false

  /// Creates an assembler accepting messages up to `maximumSize` bytes.
  init(maximumSize: Int) { self.maximumSize = maximumSize }

  /// Adds one piece. `first`: the piece starts a message; `last`: it ends one (final fragment
  /// with no payload left). Returns the whole message (and whether it was binary) when `last`.
  /// - Throws: `Failure.tooLarge` when the message exceeds `maximumSize`; the partial message
  ///   is dropped.
  mutating func append(
    _ piece: UnsafeRawBufferPointer, first: Bool, last: Bool, binary: Bool
  ) throws(Failure) -> (bytes: [UInt8], binary: Bool)? {
    if first {
      buffer.removeAll(keepingCapacity: false)
      isBinary = binary
    }
    guard buffer.count + piece.count <= maximumSize else {
      buffer = []
      throw .tooLarge(limit: maximumSize)
    }
    buffer.append(contentsOf: piece)
    guard last else { return nil }
    defer { buffer = [] }
    return (buffer, isBinary)
  }
}
