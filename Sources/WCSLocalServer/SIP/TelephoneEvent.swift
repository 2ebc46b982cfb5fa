/// DTMF digits as RTP telephone-events (RFC 4733 §2), Sans-I/O: turns digits into the RTP
/// packets to send and when. Each digit is one event: a first packet with the marker bit, updates
/// every `packetMillis` with the growing duration, then the end packet (E bit) three times
/// (§2.5.1.4: the end is repeated so that one loss does not stretch the tone); all packets of an
/// event share its timestamp (§2.5.1.2), and the next digit starts after `gapMillis` of silence.
public struct TelephoneEventEncoder: Sendable {
  /// One packet to send `atMillis` after the first one.
  public struct Packet: Sendable, Equatable {
    /// Send time relative to the first packet, milliseconds.
    public var atMillis: Int
    /// The whole RTP packet (RFC 3550 header + 4-byte event payload).
    public var bytes: [UInt8]
  }

  /// The negotiated `telephone-event` payload type.
  public var payloadType: UInt8
  /// RTP clock rate of the event (8000 for `telephone-event/8000`).
  public var clockRate: Int = 8000
  /// Tone length of each digit, ms.
  public var toneMillis = 100
  /// Silence between digits, ms.
  public var gapMillis = 60
  /// Spacing of the update packets, ms.
  public var packetMillis = 20
  /// Volume field (0 = loudest, 63 = quietest; RFC 4733 §2.3.2), −10 dBm0 by default.
  public var volume: UInt8 = 10

  /// An encoder for `payloadType`.
  public init(payloadType: UInt8) {
    self.payloadType = payloadType
  }

  /// The RFC 4733 §3.2 event code of a DTMF digit (`0-9`, `*` = 10, `#` = 11, `A-D` = 12–15);
  /// `nil` for anything else.
  public static func eventCode(_ digit: Character) -> UInt8? {
    guard let ascii = digit.asciiValue else { return nil }
    switch digit {
    case "0"..."9": return ascii - 48
    case "*": return 10
    case "#": return 11
    case "A"..."D": return ascii - 65 + 12
    case "a"..."d": return ascii - 97 + 12
    default: return nil
    }
  }

  /// The packets for `digits` (characters other than DTMF digits are skipped), starting at RTP
  /// `sequence` and `timestamp` (the caller's stream state; it continues with the returned
  /// `nextSequence`/`nextTimestamp`).
  public func packets(
    for digits: String, ssrc: UInt32, sequence: UInt16, timestamp: UInt32
  ) -> (packets: [Packet], nextSequence: UInt16, nextTimestamp: UInt32) {
    var packets: [Packet] = []
    var seq = sequence
    var ts = timestamp
    var at = 0
    let samplesPerMilli = clockRate / 1000
    let toneSamples = toneMillis * samplesPerMilli
    for digit in digits {
      guard let event = Self.eventCode(digit) else { continue }
      var elapsed = packetMillis
      var first = true
      while elapsed < toneMillis {
        packets.append(
          Packet(
            atMillis: at + elapsed - packetMillis,
            bytes: packet(
              event: event, end: false, duration: elapsed * samplesPerMilli, marker: first,
              ssrc: ssrc, sequence: seq, timestamp: ts)))
        first = false
        seq &+= 1
        elapsed += packetMillis
      }
      for repeatIndex in 0..<3 {
        packets.append(
          Packet(
            atMillis: at + toneMillis - packetMillis + repeatIndex * 5,
            bytes: packet(
              event: event, end: true, duration: toneSamples, marker: first && repeatIndex == 0,
              ssrc: ssrc, sequence: seq, timestamp: ts)))
        seq &+= 1
      }
      at += toneMillis + gapMillis
      ts &+= UInt32((toneMillis + gapMillis) * samplesPerMilli)
    }
    return (packets, seq, ts)
  }

  private func packet(
    event: UInt8, end: Bool, duration: Int, marker: Bool, ssrc: UInt32, sequence: UInt16,
    timestamp: UInt32
  ) -> [UInt8] {
    let duration = UInt16(clamping: duration)
    return [
      0x80, (marker ? 0x80 : 0) | (payloadType & 0x7f),
      UInt8(sequence >> 8), UInt8(sequence & 0xff),
      UInt8(timestamp >> 24), UInt8((timestamp >> 16) & 0xff), UInt8((timestamp >> 8) & 0xff),
      UInt8(timestamp & 0xff),
      UInt8(ssrc >> 24), UInt8((ssrc >> 16) & 0xff), UInt8((ssrc >> 8) & 0xff), UInt8(ssrc & 0xff),
      event, (end ? 0x80 : 0) | (volume & 0x3f), UInt8(duration >> 8), UInt8(duration & 0xff),
    ]
  }
}
