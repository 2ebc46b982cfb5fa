import Foundation

/// Why a network emulation string was refused: the offending `token` and what is wrong with it.
public struct NetworkEmulationSpecError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What is wrong.
  public enum Reason: Sendable, Equatable {
    /// No such key (the known ones are `NetworkEmulation.specKeys`).
    case unknownKey
    /// A direction prefix other than `send`, `up`, `receive`, `down` or `both`.
    case unknownDirection
    /// A direction after a setting of the same section (`loss=5%,send:delay=9ms`): a
    /// direction starts a section, and sections are separated by `;`.
    case directionInsideSection
    /// Not `key=value`.
    case missingValue
    /// The value is not a number.
    case notANumber
    /// The value is below zero.
    case negative
    /// The value has no unit; `expected` lists the units it takes.
    case missingUnit(expected: String)
    /// The value's unit is not one of `expected`.
    case unknownUnit(expected: String)
    /// The value is outside `range` (e.g. `0...100 %`).
    case outOfRange(String)
    /// `burst` without a `loss` rate for the same direction.
    case burstWithoutLoss
    /// Bursts this short cannot lose that much: the mean burst length must be at least
    /// `minimum` datagrams (rate / (1 − rate)) for the Gilbert–Elliott chain to exist.
    case burstTooShort(minimum: Double)
  }

  /// The part of the string at fault, e.g. `loss=150%`.
  public var token: String
  /// What is wrong with it.
  public var reason: Reason

  /// Creates an error about `token`.
  public init(token: String, reason: Reason) {
    self.token = token
    self.reason = reason
  }

  /// `'<token>': <reason>`.
  public var description: String {
    let why: String
    switch reason {
    case .unknownKey:
      why = "unknown key (known: \(NetworkEmulation.specKeys.joined(separator: ", ")))"
    case .unknownDirection: why = "unknown direction (send/up, receive/down or both)"
    case .directionInsideSection:
      why = "a direction starts a section: separate sections with ';'"
    case .missingValue: why = "expected key=value"
    case .notANumber: why = "not a number"
    case .negative: why = "negative"
    case .missingUnit(let expected): why = "missing unit (\(expected))"
    case .unknownUnit(let expected): why = "unknown unit (\(expected))"
    case .outOfRange(let range): why = "out of range \(range)"
    case .burstWithoutLoss: why = "burst needs a loss rate"
    case .burstTooShort(let minimum):
      why = "bursts too short for that loss (mean burst ≥ \(NetworkEmulation.format(minimum)))"
    }
    return "'\(token)': \(why)"
  }
}

extension NetworkEmulation {
  /// The keys a spec string takes.
  public static let specKeys = [
    "loss", "burst", "ge", "delay", "jitter", "reorder", "duplicate", "rate", "queue", "seed",
  ]

  /// The syntax of `init(spec:)`, for `--help` texts.
  public static let specSyntax = """
    SPEC: key=value settings separated by commas apply to both directions; sections separated
    by ';' may start with a direction (send: or up: what this side sends; receive: or down:
    what it receives; both:), and apply left to right.
      loss=P%           random loss, P from 0 to 100
      burst=N           with loss: lost in bursts of N datagrams on average (Gilbert–Elliott)
      ge=P%/R%[/G%/B%]  Gilbert–Elliott: good→bad P, bad→good R, loss while good G (default
                        0 %) and while bad B (default 100 %)
      delay=T           one-way delay; T in us, ms or s (40ms)
      jitter=T          standard deviation of the delay; keeps the datagrams' order
      reorder=P%        that share skips the delay, overtaking the datagrams in flight
      duplicate=P%      that share arrives twice
      rate=R            bandwidth cap in bit, kbit, mbit, gbit (or bps, kbps, mbps, gbps)
      queue=Q           the cap's queue before tail drop: a time (100ms) or bytes (b, kb,
                        mb, kib, mib: 64kb); default 200ms
      seed=N            repeat the same random choices
    Examples: loss=5%,delay=40ms,jitter=15ms,rate=1.5mbit
              delay=20ms;up:loss=2%;down:loss=20%,burst=5
    """

  /// Parses a spec string (syntax: `specSyntax`): `key=value` settings separated by commas for
  /// both directions, or `;`-separated sections prefixed `send:`/`up:`, `receive:`/`down:` or
  /// `both:`. An empty string, `none` or `off` is the ideal network.
  ///
  /// - Throws: `NetworkEmulationSpecError` with the offending token: an unknown key or
  ///   direction, a value that is not a number, negative, over 100 %, without its unit,
  ///   `burst` without `loss`, or bursts too short for the loss rate.
  public init(spec: String) throws(NetworkEmulationSpecError) {
    var parser = SpecParser()
    try parser.parse(spec)
    self.init(
      send: try parser.send.resolved(), receive: try parser.receive.resolved(),
      seed: parser.seed)
  }

  /// The spec string of this emulation: `init(spec:)` of it gives the same conditions (`none`
  /// for the ideal network).
  public var spec: String {
    var parts: [String] = []
    if send == receive {
      if !send.isIdeal { parts.append(Self.settings(send)) }
    } else {
      if !send.isIdeal { parts.append("send:" + Self.settings(send)) }
      if !receive.isIdeal { parts.append("receive:" + Self.settings(receive)) }
    }
    if let seed { parts.append("seed=\(seed)") }
    return parts.isEmpty ? "none" : parts.joined(separator: ";")
  }

  private static func settings(_ conditions: NetworkConditions) -> String {
    var items: [String] = []
    switch conditions.loss {
    case .none: break
    case .random(let rate): items.append("loss=\(percent(rate))")
    case .gilbertElliott(let model) where model.isSimpleGilbert && model.badToGood > 0:
      items.append("loss=\(percent(model.lossRate))")
      items.append("burst=\(format(model.meanBurstLength))")
    case .gilbertElliott(let model):
      let values = [model.goodToBad, model.badToGood, model.lossInGood, model.lossInBad]
      items.append("ge=" + values.map(percent).joined(separator: "/"))
    }
    if conditions.delay > .zero { items.append("delay=\(milliseconds(conditions.delay))") }
    if conditions.jitter > .zero { items.append("jitter=\(milliseconds(conditions.jitter))") }
    if conditions.reorderRate > 0 { items.append("reorder=\(percent(conditions.reorderRate))") }
    if conditions.duplicateRate > 0 {
      items.append("duplicate=\(percent(conditions.duplicateRate))")
    }
    if let rate = conditions.rateBitsPerSecond {
      items.append("rate=\(format(Double(rate) / 1000))kbit")
      switch conditions.queueLimit {
      case .duration(let limit): items.append("queue=\(milliseconds(limit))")
      case .bytes(let limit): items.append("queue=\(limit)b")
      }
    }
    return items.joined(separator: ",")
  }

  private static func percent(_ rate: Double) -> String { format(rate * 100) + "%" }

  private static func milliseconds(_ duration: Duration) -> String {
    format(Double(duration.attoseconds) / 1e15) + "ms"
  }

  /// `value` with up to 10 significant digits and no trailing zeros (`1.5`, `40`, `0.25`).
  static func format(_ value: Double) -> String {
    guard value.isFinite else { return "\(value)" }
    var text = String(format: "%.10g", value)
    if text.contains("."), !text.contains("e") {
      while text.hasSuffix("0") { text.removeLast() }
      if text.hasSuffix(".") { text.removeLast() }
    }
    return text
  }
}

/// The settings of one direction while a spec string is read.
private struct SpecDirection {
  var conditions = NetworkConditions()
  var lossRate: Double?
  var burst: (length: Double, token: String)?
  var gilbertElliott: GilbertElliottLoss?

  func resolved() throws(NetworkEmulationSpecError) -> NetworkConditions {
    var result = conditions
    if let gilbertElliott {
      result.loss = .gilbertElliott(gilbertElliott)
    } else if let burst {
      guard let rate = lossRate else {
        throw NetworkEmulationSpecError(token: burst.token, reason: .burstWithoutLoss)
      }
      if rate >= 1 {
        result.loss = .random(rate: 1)
      } else if rate == 0 {
        result.loss = .none
      } else {
        guard let model = GilbertElliottLoss(rate: rate, meanBurstLength: burst.length) else {
          throw NetworkEmulationSpecError(
            token: burst.token, reason: .burstTooShort(minimum: max(1, rate / (1 - rate))))
        }
        result.loss = .gilbertElliott(model)
      }
    } else if let rate = lossRate {
      result.loss = rate > 0 ? .random(rate: rate) : .none
    }
    return result
  }
}

private struct SpecParser {
  var send = SpecDirection()
  var receive = SpecDirection()
  var seed: UInt64?

  mutating func parse(_ spec: String) throws(NetworkEmulationSpecError) {
    let trimmed = spec.trimmingCharacters(in: .whitespaces)
    if trimmed.isEmpty || trimmed.lowercased() == "none" || trimmed.lowercased() == "off" {
      return
    }
    for rawSection in trimmed.split(separator: ";", omittingEmptySubsequences: true) {
      var section = Substring(rawSection.trimmingCharacters(in: .whitespaces))
      var directions: [NetworkDirection] = [.send, .receive]
      if let colon = section.firstIndex(of: ":") {
        let prefix = section[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
        if let comma = section[..<colon].lastIndex(of: ",") {
          throw NetworkEmulationSpecError(
            token: section[section.index(after: comma)...].trimmingCharacters(in: .whitespaces),
            reason: .directionInsideSection)
        }
        switch prefix {
        case "send", "up": directions = [.send]
        case "receive", "down": directions = [.receive]
        case "both": break
        default:
          throw NetworkEmulationSpecError(
            token: String(section[..<colon]), reason: .unknownDirection)
        }
        section = section[section.index(after: colon)...]
      }
      for rawItem in section.split(separator: ",", omittingEmptySubsequences: true) {
        let item = rawItem.trimmingCharacters(in: .whitespaces)
        guard !item.isEmpty else { continue }
        for direction in directions { try apply(item, to: direction) }
      }
    }
  }

  private mutating func apply(_ item: String, to direction: NetworkDirection)
    throws(NetworkEmulationSpecError)
  {
    var target = direction == .send ? send : receive
    try apply(item, to: &target)
    switch direction {
    case .send: send = target
    case .receive: receive = target
    }
  }

  private mutating func apply(_ item: String, to target: inout SpecDirection)
    throws(NetworkEmulationSpecError)
  {
    guard let equals = item.firstIndex(of: "=") else {
      let key = item.lowercased()
      let known = NetworkEmulation.specKeys.contains(key)
      throw NetworkEmulationSpecError(token: item, reason: known ? .missingValue : .unknownKey)
    }
    let key = item[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
    let value = item[item.index(after: equals)...].trimmingCharacters(in: .whitespaces)
    let reader = SpecValue(token: item, text: value)
    switch key {
    case "loss":
      target.lossRate = try reader.percent()
      target.gilbertElliott = nil
    case "burst":
      let length = try reader.number()
      guard length >= 1 else {
        throw NetworkEmulationSpecError(token: item, reason: .outOfRange("≥ 1 datagram"))
      }
      target.burst = (length, item)
      target.gilbertElliott = nil
    case "ge":
      target.gilbertElliott = try reader.gilbertElliott()
    case "delay": target.conditions.delay = try reader.duration()
    case "jitter": target.conditions.jitter = try reader.duration()
    case "reorder": target.conditions.reorderRate = try reader.percent()
    case "duplicate": target.conditions.duplicateRate = try reader.percent()
    case "rate": target.conditions.rateBitsPerSecond = try reader.bitRate()
    case "queue": target.conditions.queueLimit = try reader.queueLimit()
    case "seed":
      guard let number = UInt64(value) else {
        throw NetworkEmulationSpecError(token: item, reason: .notANumber)
      }
      seed = number
    default: throw NetworkEmulationSpecError(token: item, reason: .unknownKey)
    }
  }
}

/// One `key=value`'s value, read as the key wants it.
private struct SpecValue {
  /// The whole `key=value`, for errors.
  let token: String
  let text: String

  private func fail(_ reason: NetworkEmulationSpecError.Reason) -> NetworkEmulationSpecError {
    NetworkEmulationSpecError(token: token, reason: reason)
  }

  /// The leading number and the unit after it (lowercased).
  private func split(_ text: String) throws(NetworkEmulationSpecError) -> (Double, String) {
    let numberPart = text.prefix { $0.isNumber || $0 == "." || $0 == "-" || $0 == "+" }
    let unit = text.dropFirst(numberPart.count).trimmingCharacters(in: .whitespaces).lowercased()
    guard let number = Double(numberPart), number.isFinite else { throw fail(.notANumber) }
    guard number >= 0 else { throw fail(.negative) }
    return (number, unit)
  }

  func number() throws(NetworkEmulationSpecError) -> Double {
    let (number, unit) = try split(text)
    guard unit.isEmpty else { throw fail(.unknownUnit(expected: "none")) }
    return number
  }

  func percent() throws(NetworkEmulationSpecError) -> Double {
    try percent(text)
  }

  private func percent(_ text: String) throws(NetworkEmulationSpecError) -> Double {
    let (number, unit) = try split(text)
    guard !unit.isEmpty else { throw fail(.missingUnit(expected: "%")) }
    guard unit == "%" else { throw fail(.unknownUnit(expected: "%")) }
    guard number <= 100 else { throw fail(.outOfRange("0...100 %")) }
    return number / 100
  }

  func gilbertElliott() throws(NetworkEmulationSpecError) -> GilbertElliottLoss {
    let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    guard parts.count == 2 || parts.count == 4 else {
      throw fail(.outOfRange("P%/R% or P%/R%/G%/B%"))
    }
    var values: [Double] = []
    for part in parts { values.append(try percent(part)) }
    return GilbertElliottLoss(
      goodToBad: values[0], badToGood: values[1],
      lossInGood: parts.count == 4 ? values[2] : 0, lossInBad: parts.count == 4 ? values[3] : 1)
  }

  private static let timeUnits: [String: Double] = ["us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1]
  private static let rateUnits: [String: Double] = [
    "bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "bps": 1, "kbps": 1e3, "mbps": 1e6,
    "gbps": 1e9,
  ]
  private static let byteUnits: [String: Double] = [
    "b": 1, "byte": 1, "bytes": 1, "kb": 1e3, "mb": 1e6, "kib": 1024, "mib": 1024 * 1024,
  ]

  /// The number times its unit's scale in `units`; `expected` names the units for errors.
  private func measure(_ units: [String: Double], expected: String)
    throws(NetworkEmulationSpecError) -> Double
  {
    let (number, unit) = try split(text)
    guard !unit.isEmpty else { throw fail(.missingUnit(expected: expected)) }
    guard let scale = units[unit] else { throw fail(.unknownUnit(expected: expected)) }
    return number * scale
  }

  func duration() throws(NetworkEmulationSpecError) -> Duration {
    let seconds = try measure(Self.timeUnits, expected: "us, ms or s")
    guard seconds <= 3600 else { throw fail(.outOfRange("0...1 hour")) }
    return .nanoseconds(Int64((seconds * 1e9).rounded()))
  }

  func bitRate() throws(NetworkEmulationSpecError) -> Int {
    let bits = try measure(
      Self.rateUnits, expected: "bit, kbit, mbit, gbit, bps, kbps, mbps or gbps"
    ).rounded()
    // Below 8 bit/s a datagram takes minutes; above 100 Gbit/s no cap is felt.
    guard bits >= 8, bits <= 1e11 else { throw fail(.outOfRange("8 bit/s...100 gbit/s")) }
    return Int(bits)
  }

  func queueLimit() throws(NetworkEmulationSpecError) -> NetworkQueueLimit {
    let (_, unit) = try split(text)
    if Self.timeUnits[unit] != nil { return .duration(try duration()) }
    let bytes = try measure(
      Self.byteUnits, expected: "us, ms, s, b, kb, mb, kib or mib"
    ).rounded()
    guard bytes <= 1e9 else { throw fail(.outOfRange("0...1 GB")) }
    return .bytes(Int(bytes))
  }
}
