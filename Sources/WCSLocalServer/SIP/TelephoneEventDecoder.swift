import Foundation
import WCSProtocols

/// DTMF digits out of received RTP telephone-events (RFC 4733 §2.5.2), Sans-I/O: RTP packets
/// in, one `Digit` per key press out. All packets of one event share its RTP timestamp
/// (§2.5.1.2), so the timestamp names the event: the digit is reported at its first end packet
/// (E bit), and the end's retransmissions (§2.5.1.4) and late packets of events already
/// reported are dropped. An event whose end packets were all lost is reported when the next
/// event starts (§2.5.2.2: a new timestamp ends the previous event) or by `flush()`.
public struct TelephoneEventDecoder: Sendable {
  /// One key press.
  public struct Digit: Sendable, Equatable {
    /// `0-9`, `*`, `#` or `A-D`.
    public var digit: Character
    /// The event's RTP timestamp.
    public var timestamp: UInt32
    /// The event's duration in RTP clock units (8000 Hz for `telephone-event/8000`), as the
    /// last packet seen said.
    public var duration: Int
    /// No end packet arrived: reported because a new event started or on `flush()`.
    public var endLost: Bool

    /// Memberwise initializer.
    public init(digit: Character, timestamp: UInt32, duration: Int, endLost: Bool = false) {
      self.digit = digit
      self.timestamp = timestamp
      self.duration = duration
      self.endLost = endLost
    }
  }

  /// Counts, for statistics and tests.
  public struct Statistics: Sendable, Equatable {
    /// Event packets taken (any event code).
    public var packets = 0
    /// End retransmissions and packets of events already reported.
    public var duplicates = 0
    /// Packets too short for an event, or with an event code that is not a DTMF digit.
    public var ignored = 0
  }

  private struct Current {
    var timestamp: UInt32
    var event: UInt8
    var duration: Int
    var reported: Bool
  }

  /// The negotiated `telephone-event` payload type.
  public let payloadType: UInt8
  /// What was counted.
  public private(set) var statistics = Statistics()
  private var current: Current?

  /// A decoder for `payloadType`.
  public init(payloadType: UInt8) {
    self.payloadType = payloadType
  }

  /// The DTMF digit of RFC 4733 §3.2 event `code` (0–15), `nil` for other events.
  public static func digit(forEvent code: UInt8) -> Character? {
    switch code {
    case 0...9: return Character(Unicode.Scalar(48 + code))
    case 10: return "*"
    case 11: return "#"
    case 12...15: return Character(Unicode.Scalar(65 + code - 12))
    default: return nil
    }
  }

  /// Whether `packet` is an RTP packet of the event payload type.
  public func isEvent(_ packet: RTPPacket) -> Bool {
    packet.header.payloadType == payloadType
  }

  /// Takes one received RTP packet (another payload type is ignored): the digits it completes,
  /// in order (none, one, or two when it starts a new event while the previous one's end was
  /// lost).
  public mutating func receive(_ packet: RTPPacket) -> [Digit] {
    guard isEvent(packet) else { return [] }
    guard packet.payload.count >= 4, let digit = Self.digit(forEvent: packet.payload[0]) else {
      statistics.ignored += 1
      return []
    }
    statistics.packets += 1
    let timestamp = packet.header.timestamp
    let end = packet.payload[1] & 0x80 != 0
    let duration = Int(packet.payload[2]) << 8 | Int(packet.payload[3])
    var out: [Digit] = []
    if var event = current, event.timestamp == timestamp {
      event.duration = max(event.duration, duration)
      if event.reported {
        statistics.duplicates += 1
      } else if end {
        event.reported = true
        out.append(Digit(digit: digit, timestamp: timestamp, duration: event.duration))
      }
      current = event
      return out
    }
    if let event = current {
      // RFC 3550 §A.1 style serial arithmetic: a packet of an event older than the current one
      // arrived late (reordered); its digit was reported or ended by the newer event.
      guard Int32(bitPattern: timestamp &- event.timestamp) > 0 else {
        statistics.duplicates += 1
        return []
      }
      if let lost = unreported(event) { out.append(lost) }
    }
    current = Current(
      timestamp: timestamp, event: packet.payload[0], duration: duration, reported: end)
    if end { out.append(Digit(digit: digit, timestamp: timestamp, duration: duration)) }
    return out
  }

  /// The event under way whose end never arrived (the far end went quiet, the call ends): its
  /// digit, once; `nil` when there is none.
  public mutating func flush() -> Digit? {
    guard var event = current, let digit = unreported(event) else { return nil }
    event.reported = true
    current = event
    return digit
  }

  private func unreported(_ event: Current) -> Digit? {
    guard !event.reported, let digit = Self.digit(forEvent: event.event) else { return nil }
    return Digit(digit: digit, timestamp: event.timestamp, duration: event.duration, endLost: true)
  }
}

/// DTMF carried in SIP INFO bodies: `application/dtmf-relay` (`Signal=5` / `Duration=160`
/// lines, the de-facto format SIP phones and WCS use) and `application/dtmf` (the digit alone,
/// as some user agents send). Sans-I/O.
public enum SIPInfoDTMF {
  /// Longest body read; longer ones are not DTMF.
  public static let maxBodyLength = 1024

  /// The digit of `body`, `nil` when it holds none (or something else).
  public static func digit(inBody body: String) -> Character? {
    guard body.utf8.count <= maxBodyLength else { return nil }
    let lines = body.split(whereSeparator: \.isNewline).map {
      $0.trimmingCharacters(in: .whitespaces)
    }
    for line in lines {
      guard let equals = line.firstIndex(of: "=") else { continue }
      let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
      guard key == "signal" else { continue }
      let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
      return dtmfDigit(value)
    }
    // `application/dtmf`: the body is the digit.
    return lines.count == 1 ? dtmfDigit(lines[0]) : nil
  }

  private static func dtmfDigit(_ value: String) -> Character? {
    guard value.count == 1, let character = value.uppercased().first,
      TelephoneEventEncoder.eventCode(character) != nil
    else { return nil }
    return character
  }
}
