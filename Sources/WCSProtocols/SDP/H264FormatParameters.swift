/// An H.264 `profile-level-id` (RFC 6184 §8.1): profile_idc, the constraint flags byte and
/// level_idc, read as the profile they mean rather than as a string, so `42e01f` and `42C01F`
/// (both constrained baseline) match and `42001f` (baseline) does not.
public struct H264ProfileLevelID: Sendable, Hashable, CustomStringConvertible {
  /// The profiles WebRTC endpoints negotiate.
  public enum Profile: String, Sendable, Hashable {
    case constrainedBaseline, baseline, main, extended, high, constrainedHigh
  }

  /// The profile.
  public var profile: Profile
  /// `level_idc` (ten times the level: 31 is 3.1); level 1b is `Self.level1b`.
  public var level: Int

  /// Level 1b, below 1.1 and above 1 (RFC 6184 §8.1: level_idc 11 with constraint_set3_flag
  /// in baseline, constrained baseline, main and extended, or level_idc 9).
  public static let level1b = 0

  /// A value from its parts.
  public init(profile: Profile, level: Int) {
    self.profile = profile
    self.level = level
  }

  /// Constrained baseline 3.1 (`42e01f`), what browsers offer first.
  public static let constrainedBaseline31 = H264ProfileLevelID(
    profile: .constrainedBaseline, level: 31)

  /// Reads six hex digits.
  /// - Returns: nil for a string that is not 6 hex digits or a profile_idc/constraint byte
  ///   pair of no profile above (the patterns of RFC 6184 Table 5 and RFC 6184 §8.1, as
  ///   browsers apply them).
  public init?(_ text: Substring) {
    guard text.count == 6, let value = UInt32(text, radix: 16) else { return nil }
    let profileIDC = UInt8(value >> 16)
    let constraints = UInt8((value >> 8) & 0xFF)
    let levelIDC = Int(value & 0xFF)
    // (profile_idc, mask of the bits that must match, their values) in the order of Table 5;
    // the first match wins.
    let patterns: [(UInt8, UInt8, UInt8, Profile)] = [
      (0x42, 0x4F, 0x40, .constrainedBaseline),  // x1xx0000
      (0x4D, 0x8F, 0x80, .constrainedBaseline),  // 1xxx0000
      (0x58, 0xCF, 0xC0, .constrainedBaseline),  // 11xx0000
      (0x42, 0x4F, 0x00, .baseline),  // x0xx0000
      (0x58, 0xCF, 0x80, .baseline),  // 10xx0000
      (0x4D, 0xAF, 0x00, .main),  // 0x0x0000
      (0x58, 0xCF, 0x00, .extended),  // 00xx0000
      (0x64, 0xFF, 0x00, .high),
      (0x64, 0xFF, 0x0C, .constrainedHigh),
    ]
    guard
      let match = patterns.first(where: { idc, mask, bits, _ in
        idc == profileIDC && constraints & mask == bits
      })
    else { return nil }
    profile = match.3
    let constraintSet3 = constraints & 0x10 != 0
    if levelIDC == 9
      || (levelIDC == 11 && constraintSet3
        && [.constrainedBaseline, .baseline, .main, .extended].contains(match.3))
    {
      level = Self.level1b
    } else {
      level = levelIDC
    }
  }

  /// Six lower-case hex digits, constraint flags as libwebrtc writes them.
  public var description: String {
    let (idc, constraints): (UInt8, UInt8) =
      switch profile {
      case .constrainedBaseline: (0x42, 0xE0)
      case .baseline: (0x42, 0x00)
      case .main: (0x4D, 0x00)
      case .extended: (0x58, 0x00)
      case .high: (0x64, 0x00)
      case .constrainedHigh: (0x64, 0x0C)
      }
    let is1b = level == Self.level1b
    let levelIDC = is1b ? (profile == .high || profile == .constrainedHigh ? 9 : 11) : level
    let flags = is1b && levelIDC == 11 ? constraints | 0x10 : constraints
    return [idc, flags, UInt8(clamping: levelIDC)].map { byte in
      let hex = String(byte, radix: 16)
      return hex.count == 1 ? "0" + hex : hex
    }.joined()
  }

  /// Orders levels with 1b between 1 (10) and 1.1 (11).
  static func rank(_ level: Int) -> Double { level == level1b ? 10.5 : Double(level) }
}

/// The H.264 format parameters of one payload type (RFC 6184 §8.1) and their offer/answer
/// rules (§8.2.2).
public struct H264FormatParameters: Sendable, Hashable {
  /// `profile-level-id`; absent means `420010` (baseline level 1, §8.1).
  public var profileLevelID: H264ProfileLevelID
  /// `level-asymmetry-allowed=1`.
  public var levelAsymmetryAllowed: Bool
  /// `packetization-mode` 0 (default when absent), 1 or 2.
  public var packetizationMode: Int

  /// A value from its parts.
  public init(
    profileLevelID: H264ProfileLevelID = .constrainedBaseline31,
    levelAsymmetryAllowed: Bool = true, packetizationMode: Int = 1
  ) {
    self.profileLevelID = profileLevelID
    self.levelAsymmetryAllowed = levelAsymmetryAllowed
    self.packetizationMode = packetizationMode
  }

  /// Reads an `a=fmtp` parameter list (names compared case-insensitively, RFC 6184 §8.1).
  /// - Returns: nil when `profile-level-id` is present but no profile, or `packetization-mode`
  ///   is not 0, 1 or 2.
  public init?(_ parameters: [FormatParameter]) {
    func value(_ name: String) -> String? {
      parameters.first { $0.name.lowercased() == name }?.value
    }
    if let text = value("profile-level-id") {
      guard let parsed = H264ProfileLevelID(Substring(text)) else { return nil }
      profileLevelID = parsed
    } else {
      profileLevelID = H264ProfileLevelID(profile: .baseline, level: 10)
    }
    levelAsymmetryAllowed = value("level-asymmetry-allowed") == "1"
    let mode = value("packetization-mode") ?? "0"
    guard let parsedMode = Int(mode), (0...2).contains(parsedMode) else { return nil }
    packetizationMode = parsedMode
  }

  /// The `a=fmtp` parameters, in the order browsers write them.
  public var formatParameters: [FormatParameter] {
    [
      FormatParameter("level-asymmetry-allowed", levelAsymmetryAllowed ? "1" : "0"),
      FormatParameter("packetization-mode", "\(packetizationMode)"),
      FormatParameter("profile-level-id", profileLevelID.description),
    ]
  }

  /// Whether an offered and a supported payload type are the same codec configuration: the
  /// same profile and packetization mode (RFC 6184 §8.2.2; the level is negotiated, not
  /// matched).
  public func matches(_ other: H264FormatParameters) -> Bool {
    profileLevelID.profile == other.profileLevelID.profile
      && packetizationMode == other.packetizationMode
  }

  /// The answer to `offer` from an endpoint that supports `self`, or nil when they do not
  /// match. With level asymmetry allowed on both sides the answer states our own level (what
  /// we can receive); otherwise the lower of the two (§8.2.2).
  public func answer(to offer: H264FormatParameters) -> H264FormatParameters? {
    guard matches(offer) else { return nil }
    var answer = self
    let asymmetric = levelAsymmetryAllowed && offer.levelAsymmetryAllowed
    answer.levelAsymmetryAllowed = asymmetric
    if !asymmetric,
      H264ProfileLevelID.rank(offer.profileLevelID.level)
        < H264ProfileLevelID.rank(profileLevelID.level)
    {
      answer.profileLevelID.level = offer.profileLevelID.level
    }
    return answer
  }
}
