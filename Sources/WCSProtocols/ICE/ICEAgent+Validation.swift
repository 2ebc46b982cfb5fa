extension ICEAgent {
  /// Whether `address` has proved it knows the ICE credentials on `socket`: it sent a Binding
  /// request whose MESSAGE-INTEGRITY verified with our password (RFC 8445 §7.3), or answered
  /// our check from the checked address with a success response signed with its password
  /// (§7.2.5). The driver accepts DTLS only from such addresses, so an off-path sender cannot
  /// start, steer or fail the handshake. TURN relays use their pseudo socket ID (negative).
  public func isValidated(_ address: ICETransportAddress, socket: ICESocketID) -> Bool {
    validatedAddresses.contains(ICEPairKey(socket: socket, remote: address))
  }

  /// `isValidated` for application data unwrapped from a TURN Data indication that came from
  /// `peer` through the relay living on driver socket `baseSocket`.
  public func isValidated(relayedFrom peer: ICETransportAddress, baseSocket: ICESocketID) -> Bool {
    relays.contains {
      $0.baseSocket == baseSocket && isValidated(peer, socket: $0.pseudoSocket)
    }
  }

  /// Records an authenticated address; bounded like the checklist, since an authenticated
  /// peer still chooses how many source addresses it sends from.
  func markValidated(_ address: ICETransportAddress, socket: ICESocketID) {
    guard validatedAddresses.count < maximumPairs else { return }
    validatedAddresses.insert(ICEPairKey(socket: socket, remote: address))
  }
}
