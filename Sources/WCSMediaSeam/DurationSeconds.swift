extension Duration {
  /// This duration in seconds as a `Double` (the one conversion from `Duration` to seconds).
  package var streamSeconds: Double {
    let parts = components
    return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
  }
}
