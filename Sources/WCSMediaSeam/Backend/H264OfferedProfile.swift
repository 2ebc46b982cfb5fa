/// An H.264 profile above constrained baseline that a connection may offer and send (Linux
/// addition, `MediaConnectionRequest.h264Profile`): OpenH264 encodes both with CABAC, fewer
/// bits than baseline's CAVLC for the same pictures. Offered at level 3.1 in
/// packetization-mode 1 (RFC 6184 §8.1), before the baseline formats.
public enum H264OfferedProfile: String, Sendable, Equatable, CaseIterable {
  /// Main 3.1, `profile-level-id=4d001f`.
  case main
  /// Constrained high 3.1, `profile-level-id=640c1f`.
  case constrainedHigh
}
