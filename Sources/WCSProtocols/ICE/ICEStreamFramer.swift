/// Why an `ICEStreamFramer` refused a stream. A stream cannot be resynchronised after a bad
/// header, so the connection carrying it is to be closed.
public enum ICEStreamFramingError: Error, Equatable, Sendable {
  /// A frame announced 0 bytes (RFC 4571 frame, ChannelData): nothing legitimate is that short.
  case emptyFrame
  /// A frame announced more than the framer's bound (bytes announced, the bound).
  case frameTooLarge(length: Int, limit: Int)
  /// A TURN stream message began with a byte that is neither STUN (first two bits 00) nor
  /// ChannelData (channel 0x4000–0x4FFF, RFC 8656 §12).
  case unknownMessage(firstByte: UInt8)
  /// A STUN message's length was not a multiple of 4 (RFC 8489 §5).
  case misalignedSTUNLength(Int)
  /// The stream ended inside a frame: bytes buffered of a frame not complete.
  case truncated(buffered: Int)
  /// The framer failed before; it takes nothing more.
  case failed
}

/// Splits a TCP byte stream into the datagrams it carries and frames datagrams for it, Sans-I/O
/// (bytes in, whole frames out).
///
/// Two framings:
/// - `.rfc4571`: each datagram after a 16-bit big-endian length (RFC 4571 §2), as ICE-TCP
///   carries STUN, DTLS and SRTP (RFC 6544 §3).
/// - `.turn`: TURN over TCP or TLS (RFC 8656 §3.1): STUN messages delimited by their own
///   length header (20 + length), ChannelData by its length padded to a multiple of 4 on the
///   stream (RFC 8656 §12.5); frames come out without that padding.
///
/// Every announced length is checked against `maximumFrameLength` before anything is buffered
/// for it, so a peer cannot make it hold more than one bounded frame; a zero length (RFC 4571,
/// ChannelData) or a malformed header fails the framer for good (`ICEStreamFramingError`).
public struct ICEStreamFramer: Sendable {
  /// How frames are delimited.
  public enum Framing: Sendable, Equatable {
    /// 16-bit length prefix (RFC 4571).
    case rfc4571
    /// STUN and ChannelData by their own headers (RFC 8656 §3.1, §12.5).
    case turn
  }

  /// The framing in use.
  public let framing: Framing
  /// The largest frame accepted, bytes (the frame's datagram, without length prefix or
  /// padding). 4096 by default: the datagrams carried are MTU-sized (RTP and DTLS records of
  /// at most 1500 bytes, STUN far less), and a frame past it is a broken or hostile stream.
  public let maximumFrameLength: Int
  /// Frames produced so far.
  public private(set) var frames = 0
  /// Bytes waiting for the rest of their frame.
  public var bufferedBytes: Int { buffer.count - start }
  /// Whether the framer failed (see `ICEStreamFramingError`).
  public private(set) var hasFailed = false

  private var buffer: [UInt8] = []
  private var start = 0

  /// Makes a framer; `maximumFrameLength` is clamped to 16..65535.
  public init(framing: Framing, maximumFrameLength: Int = 4096) {
    self.framing = framing
    self.maximumFrameLength = min(max(maximumFrameLength, 16), 65535)
  }

  /// Takes the next bytes of the stream; returns the frames they completed, in order (each a
  /// whole datagram: a STUN message, a ChannelData message, an RFC 4571 payload).
  ///
  /// - Throws: `ICEStreamFramingError` for a bad header; the frames completed before it in
  ///   the same call are lost with the stream, which is to be closed.
  public mutating func receive(_ bytes: some Collection<UInt8>) throws(ICEStreamFramingError)
    -> [[UInt8]]
  {
    guard !hasFailed else { throw .failed }
    buffer.append(contentsOf: bytes)
    var output: [[UInt8]] = []
    while true {
      let available = buffer.count - start
      let frame: (offset: Int, length: Int, total: Int)?
      do throws(ICEStreamFramingError) {
        frame = try nextFrame(available: available)
      } catch {
        hasFailed = true
        buffer = []
        start = 0
        throw error
      }
      guard let frame, frame.total <= available else { break }
      output.append(Array(buffer[(start + frame.offset)..<(start + frame.offset + frame.length)]))
      start += frame.total
      frames += 1
    }
    if start == buffer.count {
      buffer.removeAll(keepingCapacity: true)
      start = 0
    } else if start > 0 {
      buffer.removeFirst(start)
      start = 0
    }
    return output
  }

  /// The stream ended (the peer closed it): throws `.truncated` when part of a frame is
  /// buffered, which is then dropped.
  public mutating func finish() throws(ICEStreamFramingError) {
    let buffered = bufferedBytes
    buffer = []
    start = 0
    if buffered > 0 { throw .truncated(buffered: buffered) }
  }

  /// The frame at `start`: where its datagram begins, its length and the bytes it takes on
  /// the stream; `nil` while its header is incomplete.
  private func nextFrame(available: Int) throws(ICEStreamFramingError)
    -> (offset: Int, length: Int, total: Int)?
  {
    switch framing {
    case .rfc4571:
      guard available >= 2 else { return nil }
      let length = Int(buffer[start]) << 8 | Int(buffer[start + 1])
      guard length > 0 else { throw .emptyFrame }
      guard length <= maximumFrameLength else {
        throw .frameTooLarge(length: length, limit: maximumFrameLength)
      }
      return (2, length, 2 + length)
    case .turn:
      guard available >= 1 else { return nil }
      let first = buffer[start]
      guard first <= 0x4F else {
        throw .unknownMessage(firstByte: first)
      }
      guard available >= 4 else { return nil }
      let length = Int(buffer[start + 2]) << 8 | Int(buffer[start + 3])
      if first < 0x40 {
        guard length % 4 == 0 else { throw .misalignedSTUNLength(length) }
        guard length + 20 <= maximumFrameLength else {
          throw .frameTooLarge(length: length + 20, limit: maximumFrameLength)
        }
        return (0, 20 + length, 20 + length)
      }
      guard length > 0 else { throw .emptyFrame }
      guard length + 4 <= maximumFrameLength else {
        throw .frameTooLarge(length: length + 4, limit: maximumFrameLength)
      }
      return (0, 4 + length, 4 + (length + 3) & ~3)
    }
  }

  /// `datagram` as it goes on the stream: after its 16-bit length (`.rfc4571`), or as is with
  /// a ChannelData message padded to a multiple of 4 (`.turn`).
  ///
  /// - Throws: `ICEStreamFramingError.emptyFrame` or `.frameTooLarge` (over 65535 bytes for
  ///   RFC 4571).
  public static func frame(_ datagram: [UInt8], framing: Framing) throws(ICEStreamFramingError)
    -> [UInt8]
  {
    guard !datagram.isEmpty else { throw .emptyFrame }
    switch framing {
    case .rfc4571:
      guard datagram.count <= 65535 else {
        throw .frameTooLarge(length: datagram.count, limit: 65535)
      }
      return [UInt8(datagram.count >> 8), UInt8(datagram.count & 0xFF)] + datagram
    case .turn:
      let first = datagram[0]
      guard first >= 0x40 && first <= 0x4F else { return datagram }
      let padding = (4 - datagram.count % 4) % 4
      return padding == 0 ? datagram : datagram + [UInt8](repeating: 0, count: padding)
    }
  }
}
