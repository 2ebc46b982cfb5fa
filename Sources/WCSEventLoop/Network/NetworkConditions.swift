import Synchronization

/// How datagrams are lost on one direction of an emulated link.
public enum NetworkLoss: Sendable, Equatable {
  /// Nothing lost.
  case none
  /// Each datagram lost on its own with probability `rate` (0...1; Bernoulli loss).
  case random(rate: Double)
  /// Losses in bursts: a two-state Markov chain per datagram (Gilbert–Elliott).
  case gilbertElliott(GilbertElliottLoss)
}

/// The Gilbert–Elliott loss model: a link is either *good* or *bad*; each datagram is lost with
/// `lossInGood` or `lossInBad`, then the link moves good → bad with probability `goodToBad`
/// (p) and bad → good with `badToGood` (r). All five are probabilities in 0...1.
///
/// With the simple Gilbert form (`lossInGood` 0, `lossInBad` 1) every datagram sent while bad is
/// lost, so a burst is one stay in the bad state: its mean length is 1 / r datagrams and the
/// overall loss rate is p / (p + r) (the chain's stationary share of bad).
public struct GilbertElliottLoss: Sendable, Equatable {
  /// p: the probability of moving good → bad after a datagram.
  public var goodToBad: Double
  /// r: the probability of moving bad → good after a datagram.
  public var badToGood: Double
  /// 1 − k: the loss probability in the good state.
  public var lossInGood: Double
  /// h: the loss probability in the bad state.
  public var lossInBad: Double

  /// The chain with these transition and loss probabilities (each 0...1).
  public init(goodToBad: Double, badToGood: Double, lossInGood: Double = 0, lossInBad: Double = 1) {
    self.goodToBad = goodToBad
    self.badToGood = badToGood
    self.lossInGood = lossInGood
    self.lossInBad = lossInBad
  }

  /// The simple Gilbert chain losing `rate` (0..<1) of the datagrams in bursts of
  /// `meanBurstLength` datagrams on average: r = 1 / length, p = rate · r / (1 − rate).
  /// `nil` when no such chain exists: p would exceed 1, i.e. the bursts are too short for that
  /// much loss (`meanBurstLength` < rate / (1 − rate)), or `meanBurstLength` < 1.
  public init?(rate: Double, meanBurstLength: Double) {
    guard rate >= 0, rate < 1, meanBurstLength >= 1, meanBurstLength.isFinite else { return nil }
    let r = 1 / meanBurstLength
    let p = rate * r / (1 - rate)
    // The bound itself (rate / (1 − rate)) may come out a rounding error above 1.
    guard p <= 1 + 1e-9 else { return nil }
    self.init(goodToBad: min(p, 1), badToGood: r)
  }

  /// The long-run share of datagrams lost: π_good · (1 − k) + π_bad · h.
  public var lossRate: Double {
    let total = goodToBad + badToGood
    guard total > 0 else { return lossInGood }
    let bad = goodToBad / total
    return (1 - bad) * lossInGood + bad * lossInBad
  }

  /// The mean stay in the bad state, in datagrams (1 / r): the mean burst length of the simple
  /// Gilbert form.
  public var meanBurstLength: Double { badToGood > 0 ? 1 / badToGood : .infinity }

  /// Whether this is the simple Gilbert form (nothing lost while good, everything while bad).
  public var isSimpleGilbert: Bool { lossInGood == 0 && lossInBad == 1 }
}

/// When a bandwidth-capped link's queue is full: datagrams that arrive then are dropped
/// (tail drop).
public enum NetworkQueueLimit: Sendable, Equatable {
  /// Full when a new datagram would wait longer than this before it starts to be sent.
  case duration(Duration)
  /// Full when the bytes waiting plus the new datagram's would exceed this (UDP payload octets).
  case bytes(Int)
}

/// What one direction of an emulated link does to datagrams, in this order: loss, the
/// bandwidth cap and its queue, then delay and jitter (or, for the reordered share, no delay),
/// then duplication. The defaults change nothing.
///
/// Jitter keeps the order of datagrams: a datagram is never delivered before one sent ahead
/// of it (its time is pushed to that one's if jitter would put it earlier), as on a real path
/// whose delay varies through its queues, which are first in, first out. Reordering happens only
/// when asked, by `reorderRate`: that share of the datagrams skips the delay (as Linux netem's
/// `reorder` does) and so overtakes the ones still in flight.
public struct NetworkConditions: Sendable, Equatable {
  /// Which datagrams are lost (default `.none`).
  public var loss: NetworkLoss
  /// One-way delay added to every datagram (default zero).
  public var delay: Duration
  /// Standard deviation of a normal variation of `delay`, cut at ±3σ and at zero total delay
  /// (default zero).
  public var jitter: Duration
  /// Share of datagrams (0...1) sent without `delay` and `jitter`, ahead of those in flight
  /// (default 0).
  public var reorderRate: Double
  /// Share of datagrams (0...1) delivered twice, the copy right after the original (default 0).
  public var duplicateRate: Double
  /// The link's bandwidth in bits per second of UDP payload; `nil` (default) for no cap.
  public var rateBitsPerSecond: Int?
  /// How much the capped link queues before it drops (default 200 ms of the rate); unused
  /// without `rateBitsPerSecond`.
  public var queueLimit: NetworkQueueLimit

  /// Conditions with the given parameters (see the properties); the defaults change nothing.
  public init(
    loss: NetworkLoss = .none, delay: Duration = .zero, jitter: Duration = .zero,
    reorderRate: Double = 0, duplicateRate: Double = 0, rateBitsPerSecond: Int? = nil,
    queueLimit: NetworkQueueLimit = .duration(.milliseconds(200))
  ) {
    self.loss = loss
    self.delay = delay
    self.jitter = jitter
    self.reorderRate = reorderRate
    self.duplicateRate = duplicateRate
    self.rateBitsPerSecond = rateBitsPerSecond
    self.queueLimit = queueLimit
  }

  /// `true` when these conditions change nothing (no loss, delay, jitter, reordering,
  /// duplication or cap): a socket then takes its direct path.
  public var isIdeal: Bool {
    loss == .none && delay <= .zero && jitter <= .zero && reorderRate <= 0 && duplicateRate <= 0
      && rateBitsPerSecond == nil
  }
}

/// A network emulator for both directions of a connection's UDP sockets: `send` applies to
/// what we send (before `sendto`), `receive` to what we receive (after `recvfrom`, before ICE,
/// DTLS or SRTP see it). Give it to `PeerConnectionConfiguration.networkEmulation`; a
/// `NetworkEmulation(spec:)` string such as `loss=5%,delay=40ms,jitter=15ms,rate=1.5mbit`
/// builds one.
///
/// Copies share `counters`: every socket made with this emulation (or a copy of it) adds what
/// its emulators did there, so an application reads one total for all its connections.
public struct NetworkEmulation: Sendable {
  /// What happens to the datagrams we send.
  public var send: NetworkConditions
  /// What happens to the datagrams we receive.
  public var receive: NetworkConditions
  /// Seeds the emulators' random choices so runs repeat (each socket and direction draws its
  /// own stream from it, in the order sockets are made); `nil` (default) seeds from the system.
  public var seed: UInt64?
  /// What the emulators of every socket using this emulation did so far.
  public let counters: NetworkEmulationCounters

  /// An emulation with `send` and `receive` conditions and an optional `seed`.
  public init(
    send: NetworkConditions = NetworkConditions(),
    receive: NetworkConditions = NetworkConditions(), seed: UInt64? = nil
  ) {
    self.send = send
    self.receive = receive
    self.seed = seed
    counters = NetworkEmulationCounters()
  }

  /// The same `conditions` on both directions.
  public init(both conditions: NetworkConditions, seed: UInt64? = nil) {
    self.init(send: conditions, receive: conditions, seed: seed)
  }

  /// `true` when neither direction changes anything.
  public var isIdeal: Bool { send.isIdeal && receive.isIdeal }

  /// A fresh emulator for one direction of one socket, with its own random stream, or `nil`
  /// for an ideal direction.
  func makeEmulator(_ direction: NetworkDirection) -> NetworkEmulator? {
    let conditions = direction == .send ? send : receive
    guard !conditions.isIdeal else { return nil }
    let stream = counters.nextStream()
    var system = SystemRandomNumberGenerator()
    let base = seed ?? system.next()
    // Distinct, repeatable streams per socket and direction from one seed.
    let mixed = base &+ (stream &* 2 &+ (direction == .send ? 0 : 1)) &* 0x9E37_79B9_7F4A_7C15
    return NetworkEmulator(conditions: conditions, seed: mixed)
  }
}

/// Which way a datagram goes through a socket.
public enum NetworkDirection: Sendable, Equatable {
  /// From us to the peer.
  case send
  /// From the peer to us.
  case receive
}

/// What the emulators of one direction did, in datagrams.
public struct NetworkEmulatorStatistics: Sendable, Equatable {
  /// Datagrams that entered the emulator.
  public var datagrams = 0
  /// Dropped by the loss model.
  public var lost = 0
  /// Dropped because the bandwidth cap's queue was full (tail drop), or because too many were
  /// in flight (`NetworkEmulator.maximumInFlight`).
  public var queueDrops = 0
  /// Delivered later than they entered (delay, jitter or the cap's queue).
  public var delayed = 0
  /// Delivered twice.
  public var duplicated = 0
  /// Delivered before a datagram that entered ahead of them.
  public var reordered = 0

  /// Creates zero counters.
  public init() {}

  /// Datagrams dropped for any reason.
  public var dropped: Int { lost + queueDrops }

  /// Datagrams delivered, copies included.
  public var delivered: Int { datagrams - dropped + duplicated }

  /// Counts one datagram's verdict, given at `now`.
  mutating func count(_ verdict: NetworkEmulatorVerdict, now: Duration) {
    datagrams += 1
    switch verdict {
    case .dropped(.loss): lost += 1
    case .dropped(.queueFull): queueDrops += 1
    case .deliver(let time, let copies, let reordered):
      if time > now { delayed += 1 }
      if copies > 1 { duplicated += 1 }
      if reordered { self.reordered += 1 }
    }
  }

  /// The sum of two sets of counters.
  package static func + (left: Self, right: Self) -> Self {
    var sum = left
    sum.datagrams += right.datagrams
    sum.lost += right.lost
    sum.queueDrops += right.queueDrops
    sum.delayed += right.delayed
    sum.duplicated += right.duplicated
    sum.reordered += right.reordered
    return sum
  }
}

/// What an emulation did on both directions.
public struct NetworkEmulationStatistics: Sendable, Equatable {
  /// The datagrams we sent.
  public var send = NetworkEmulatorStatistics()
  /// The datagrams we received.
  public var receive = NetworkEmulatorStatistics()

  /// Creates zero counters.
  public init() {}

  /// The sum of two sets of counters.
  package static func + (left: Self, right: Self) -> Self {
    var sum = left
    sum.send = left.send + right.send
    sum.receive = left.receive + right.receive
    return sum
  }
}

/// The running totals of every socket using one `NetworkEmulation`; readable from any thread.
public final class NetworkEmulationCounters: Sendable {
  private struct State {
    var statistics = NetworkEmulationStatistics()
    var streams: UInt64 = 0
  }

  private let state = Mutex(State())

  init() {}

  /// The totals so far.
  public var statistics: NetworkEmulationStatistics { state.withLock { $0.statistics } }

  /// Adds one verdict on `direction`, given at `now`.
  func count(_ verdict: NetworkEmulatorVerdict, direction: NetworkDirection, now: Duration) {
    state.withLock {
      switch direction {
      case .send: $0.statistics.send.count(verdict, now: now)
      case .receive: $0.statistics.receive.count(verdict, now: now)
      }
    }
  }

  /// The index of the next emulator's random stream.
  fileprivate func nextStream() -> UInt64 {
    state.withLock { state in
      defer { state.streams += 1 }
      return state.streams
    }
  }
}
