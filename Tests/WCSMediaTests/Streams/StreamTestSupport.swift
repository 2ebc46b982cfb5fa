import TestSupport

@testable import WCSMedia
@testable import WCSProtocols

/// A fixed origin for virtual time: tests add offsets to it and never read the real clock again.
let streamTestClockOrigin = MediaInstant.now()

/// The instant `seconds` after `streamTestClockOrigin`.
func virtualTime(_ seconds: Double) -> MediaInstant {
  streamTestClockOrigin + .seconds(seconds)
}

/// A packet with the given header fields, for feeding a receive stream.
func streamTestPacket(
  ssrc: UInt32, sequenceNumber: UInt16, timestamp: UInt32, payloadType: UInt8 = 96,
  marker: Bool = false, payload: [UInt8] = [1, 2, 3, 4]
) -> RTPPacket {
  RTPPacket(
    header: RTPHeader(
      marker: marker, payloadType: payloadType, sequenceNumber: sequenceNumber,
      timestamp: timestamp, ssrc: ssrc),
    payload: payload)
}

/// `streamTestPacket` serialized, for the paths that take datagrams.
func streamTestPacketBytes(
  ssrc: UInt32, sequenceNumber: UInt16, timestamp: UInt32, payloadType: UInt8 = 96,
  marker: Bool = false, payload: [UInt8] = [1, 2, 3, 4]
) -> [UInt8] {
  let packet = streamTestPacket(
    ssrc: ssrc, sequenceNumber: sequenceNumber, timestamp: timestamp, payloadType: payloadType,
    marker: marker, payload: payload)
  return (try? packet.serialized()) ?? []
}

/// A one-way in-memory link on a virtual clock: each packet is lost with `lossRate`, otherwise
/// delivered after `baseDelay` plus a uniform random 0...`jitter` (which reorders). Seeded.
struct StreamTestLink<Packet> {
  private var generator: SplitMix64
  let lossRate: Double
  let baseDelay: Double
  let jitter: Double
  private var inFlight: [(due: Double, order: Int, packet: Packet)] = []
  private var order = 0
  private(set) var sent = 0
  private(set) var dropped = 0

  init(seed: UInt64, lossRate: Double, baseDelay: Double, jitter: Double) {
    generator = SplitMix64(seed: seed)
    self.lossRate = lossRate
    self.baseDelay = baseDelay
    self.jitter = jitter
  }

  mutating func send(_ packet: Packet, now: Double) {
    sent += 1
    if Double.random(in: 0..<1, using: &generator) < lossRate {
      dropped += 1
      return
    }
    let delay = baseDelay + Double.random(in: 0...jitter, using: &generator)
    inFlight.append((now + delay, order, packet))
    order += 1
  }

  /// Packets due at or before `now`, in arrival order, with their arrival times.
  mutating func deliver(upTo now: Double) -> [(arrival: Double, packet: Packet)] {
    let due = inFlight.filter { $0.due <= now }.sorted { ($0.due, $0.order) < ($1.due, $1.order) }
    inFlight.removeAll { $0.due <= now }
    return due.map { ($0.due, $0.packet) }
  }
}
