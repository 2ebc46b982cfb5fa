import Foundation
import WCSProtocols

/// Why the emulator dropped a datagram.
public enum NetworkEmulatorDrop: Sendable, Equatable {
  /// The loss model lost it.
  case loss
  /// The bandwidth cap's queue was full (tail drop), or too many datagrams were in flight.
  case queueFull
}

/// What becomes of one datagram.
public enum NetworkEmulatorVerdict: Sendable, Equatable {
  /// Never delivered.
  case dropped(NetworkEmulatorDrop)
  /// Delivered at `time` (on the clock of the `now` given to `admit`), `copies` times (1, or 2
  /// when duplicated, the copy right after); `reordered` when it goes ahead of a datagram
  /// admitted before it.
  case deliver(at: Duration, copies: Int, reordered: Bool)
}

/// One direction of an emulated link as a Sans-I/O value: `admit` takes a datagram's size and
/// the time it enters, and says whether, when and how many times it comes out. It holds the
/// loss model's state, the capped link's queue and the last delivery time (to keep order), and
/// draws from a seeded generator, so the same seed and inputs give the same verdicts.
///
/// Times are `Duration`s since any fixed origin (the event loop's); `now` must not go back.
public struct NetworkEmulator: Sendable {
  /// Datagrams in flight at most (admitted and not yet due): a bound on the memory a fast
  /// sender can make a delaying emulator hold; more are dropped as `.queueFull`.
  public static let maximumInFlight = 4096

  /// The conditions, with probabilities clamped to 0...1 and durations to ≥ 0.
  public let conditions: NetworkConditions
  /// What this emulator did so far.
  public private(set) var statistics = NetworkEmulatorStatistics()

  private var random: ICERandom
  private var inBadState = false
  /// When the capped link has sent everything queued so far.
  private var linkFreeAt: Duration = .zero
  /// The latest delivery time given to a datagram that keeps order.
  private var lastInOrder: Duration = .zero
  /// The latest delivery time given to any datagram.
  private var lastDelivery: Duration = .zero
  /// Delivery times of the datagrams in flight that keep order, and of the reordered ones: each
  /// list is in time order (the in-order times never go back, nor do departures), so what is
  /// due leaves from the front.
  private var inOrderInFlight = DeliveryTimes()
  private var reorderedInFlight = DeliveryTimes()

  /// An emulator for `conditions`, drawing from a generator seeded with `seed`.
  public init(conditions: NetworkConditions, seed: UInt64) {
    self.conditions = Self.clamped(conditions)
    random = ICERandom(seed: seed)
  }

  /// Decides the fate of a datagram of `size` octets entering at `now`.
  public mutating func admit(size: Int, now: Duration) -> NetworkEmulatorVerdict {
    let verdict = decide(size: max(size, 0), now: now)
    statistics.count(verdict, now: now)
    return verdict
  }

  private mutating func decide(size: Int, now: Duration) -> NetworkEmulatorVerdict {
    if isLost() { return .dropped(.loss) }
    inOrderInFlight.removeDue(by: now)
    reorderedInFlight.removeDue(by: now)
    guard inOrderInFlight.count + reorderedInFlight.count < Self.maximumInFlight else {
      return .dropped(.queueFull)
    }
    var departure = now
    if let rate = conditions.rateBitsPerSecond {
      let start = max(now, linkFreeAt)
      if isQueueFull(waiting: start - now, size: size, rate: rate) { return .dropped(.queueFull) }
      // Serialization at the link's rate, in attoseconds so small datagrams keep their share.
      let serialization = Duration(
        attoseconds: Int128(size) * 8 * 1_000_000_000_000_000_000 / Int128(rate))
      linkFreeAt = start + serialization
      departure = linkFreeAt
    }
    let time: Duration
    if conditions.reorderRate > 0, chance(conditions.reorderRate) {
      time = departure
      reorderedInFlight.append(time)
    } else {
      time = max(departure + conditions.delay + jitterSample(), lastInOrder)
      lastInOrder = time
      inOrderInFlight.append(time)
    }
    let reordered = time < lastDelivery
    lastDelivery = max(lastDelivery, time)
    let copies = conditions.duplicateRate > 0 && chance(conditions.duplicateRate) ? 2 : 1
    return .deliver(at: time, copies: copies, reordered: reordered)
  }

  private mutating func isLost() -> Bool {
    switch conditions.loss {
    case .none: return false
    case .random(let rate): return chance(rate)
    case .gilbertElliott(let model):
      let lost = chance(inBadState ? model.lossInBad : model.lossInGood)
      inBadState = chance(inBadState ? 1 - model.badToGood : model.goodToBad)
      return lost
    }
  }

  private func isQueueFull(waiting: Duration, size: Int, rate: Int) -> Bool {
    switch conditions.queueLimit {
    case .duration(let limit): return waiting > limit
    case .bytes(let limit):
      let queued = waiting.attoseconds * Int128(rate) / 8 / 1_000_000_000_000_000_000
      return queued + Int128(size) > Int128(limit)
    }
  }

  /// `true` with probability `probability`.
  private mutating func chance(_ probability: Double) -> Bool {
    guard probability > 0 else { return false }
    guard probability < 1 else { return true }
    return unit() < probability
  }

  /// A uniform draw in [0, 1) with 53 random bits.
  private mutating func unit() -> Double {
    Double(random.next() >> 11) * 0x1p-53
  }

  /// A normal deviation of standard deviation `jitter`, cut at ±3σ and so that delay + it ≥ 0
  /// (Box–Muller, one of the pair used).
  private mutating func jitterSample() -> Duration {
    let sigma = conditions.jitter
    guard sigma > .zero else { return .zero }
    let u1 = 1 - unit()  // (0, 1]: no log(0)
    let u2 = unit()
    let normal = (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    let deviation = sigma * min(max(normal, -3), 3)
    return max(deviation, .zero - conditions.delay)
  }

  private static func clamped(_ conditions: NetworkConditions) -> NetworkConditions {
    func probability(_ value: Double) -> Double { value.isNaN ? 0 : min(max(value, 0), 1) }
    var result = conditions
    switch conditions.loss {
    case .none: break
    case .random(let rate): result.loss = .random(rate: probability(rate))
    case .gilbertElliott(let model):
      result.loss = .gilbertElliott(
        GilbertElliottLoss(
          goodToBad: probability(model.goodToBad), badToGood: probability(model.badToGood),
          lossInGood: probability(model.lossInGood), lossInBad: probability(model.lossInBad)))
    }
    result.delay = max(conditions.delay, .zero)
    result.jitter = max(conditions.jitter, .zero)
    result.reorderRate = probability(conditions.reorderRate)
    result.duplicateRate = probability(conditions.duplicateRate)
    if let rate = conditions.rateBitsPerSecond, rate <= 0 { result.rateBitsPerSecond = 1 }
    switch conditions.queueLimit {
    case .duration(let limit): result.queueLimit = .duration(max(limit, .zero))
    case .bytes(let limit): result.queueLimit = .bytes(max(limit, 0))
    }
    return result
  }
}

/// Times in non-decreasing order, taken from the front once due.
private struct DeliveryTimes: Sendable {
  private var times = FrontQueue<Duration>()

  var count: Int { times.count }

  mutating func append(_ time: Duration) { times.append(time) }

  mutating func removeDue(by now: Duration) {
    while let first = times.first, first <= now { _ = times.popFirst() }
  }
}
