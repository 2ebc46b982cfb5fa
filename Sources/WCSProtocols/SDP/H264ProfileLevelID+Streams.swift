/// What a negotiated `profile-level-id` lets a sender put on the wire: a coded stream whose
/// own profile and level (from its SPS) a decoder of the negotiated ones decodes.
extension H264ProfileLevelID {
  /// The profile and level of an SPS's first three bytes after the NAL header (ITU-T H.264
  /// §7.3.2.1.1: `profile_idc`, the constraint flags, `level_idc`), read as RFC 6184 §8.1 reads
  /// `profile-level-id`.
  /// - Returns: nil for a profile RFC 6184 has no name for (e.g. High 10, High 4:4:4).
  public init?(profileIDC: UInt8, constraintFlags: UInt8, levelIDC: UInt8) {
    let text = [profileIDC, constraintFlags, levelIDC].map { byte in
      let digits = String(byte, radix: 16)
      return digits.count == 1 ? "0" + digits : digits
    }.joined()
    self.init(Substring(text))
  }

  /// Whether a decoder of this profile and level decodes `stream` (ITU-T H.264 Annex A):
  /// its profile is this one or a subset of it, and its level is at most this one. Constrained
  /// baseline is the common subset of baseline, main, extended and the high profiles (A.2.1.1:
  /// a stream with `constraint_set1_flag` obeys main's constraints too); main streams are
  /// high streams (A.2.4).
  public func accepts(_ stream: H264ProfileLevelID) -> Bool {
    guard Self.rank(stream.level) <= Self.rank(level) else { return false }
    let decodable: Set<Profile> =
      switch profile {
      case .constrainedBaseline: [.constrainedBaseline]
      case .baseline: [.constrainedBaseline, .baseline]
      case .main: [.constrainedBaseline, .main]
      case .extended: [.constrainedBaseline, .extended]
      case .high: [.constrainedBaseline, .main, .high, .constrainedHigh]
      case .constrainedHigh: [.constrainedBaseline, .constrainedHigh]
      }
    return decodable.contains(stream.profile)
  }
}
