import WCSMedia

/// A minimal in-memory TURN server (RFC 8656 over UDP) for the virtual network: long-term
/// credentials with a 401 challenge, Allocate, Refresh, CreatePermission, Send and Data
/// indications. Returns the datagrams it sends as (source, destination, bytes).
final class FakeTURNServer {
  let address: ICETransportAddress
  let username: String
  let password: String
  let realm = "wcs.test"
  let nonce = "nonce-1"
  private let key: STUNIntegrityKey
  private var allocations: [ICETransportAddress: Allocation] = [:]
  private var clientForRelay: [ICETransportAddress: ICETransportAddress] = [:]
  private var nextPort: UInt16 = 50000
  /// Requests seen, in order: method and whether they carried MESSAGE-INTEGRITY.
  private(set) var requests: [(method: STUNMethod, signed: Bool)] = []

  struct Allocation {
    var relayed: ICETransportAddress
    var permissions: Set<ICEIPAddress> = []
  }

  init(address: ICETransportAddress, username: String, password: String) throws {
    self.address = address
    self.username = username
    self.password = password
    key = try STUNIntegrityKey.longTerm(username: username, realm: realm, password: password)
  }

  func owns(_ destination: ICETransportAddress) -> Bool {
    destination == address || clientForRelay[destination] != nil
  }

  func handle(
    _ bytes: [UInt8], from source: ICETransportAddress, to destination: ICETransportAddress
  )
    -> [(ICETransportAddress, ICETransportAddress, [UInt8])]
  {
    if destination != address {
      // A peer sent to a relayed address: forward as a Data indication if permitted.
      guard let client = clientForRelay[destination],
        allocations[client]?.permissions.contains(source.ip) == true
      else { return [] }
      let indication = STUNMessage(
        type: STUNMessageType(method: .data, messageClass: .indication),
        attributes: [.xorPeerAddress(source), .data(bytes)])
      guard let encoded = try? indication.encode(fingerprint: true) else { return [] }
      return [(address, client, encoded)]
    }
    guard let message = try? STUNMessage.decode(bytes) else { return [] }
    if message.type == STUNMessageType(method: .send, messageClass: .indication) {
      guard let allocation = allocations[source], let peer = message.xorPeerAddress,
        let data = message.data, allocation.permissions.contains(peer.ip)
      else { return [] }
      return [(allocation.relayed, peer, data)]
    }
    guard message.type.messageClass == .request else { return [] }
    requests.append((message.type.method, message.messageIntegrity != nil))
    guard message.messageIntegrity != nil, message.username == username,
      (try? message.verifyIntegrity(key: key)) != nil
    else {
      return reply(
        message, source, .errorResponse,
        [.errorCode(code: 401, reason: "Unauthorized"), .realm(realm), .nonce(nonce)], sign: false)
    }
    switch message.type.method {
    case .allocate:
      let relayed = ICETransportAddress(ip: address.ip, port: nextPort)
      nextPort += 1
      allocations[source] = Allocation(relayed: relayed)
      clientForRelay[relayed] = source
      return reply(
        message, source, .successResponse,
        [.xorRelayedAddress(relayed), .xorMappedAddress(source), .lifetime(600)], sign: true)
    case .createPermission:
      guard let peer = message.xorPeerAddress, allocations[source] != nil else {
        return reply(
          message, source, .errorResponse, [.errorCode(code: 437, reason: "Mismatch")], sign: true)
      }
      allocations[source]?.permissions.insert(peer.ip)
      return reply(message, source, .successResponse, [], sign: true)
    case .refresh:
      return reply(
        message, source, .successResponse, [.lifetime(message.lifetime ?? 600)], sign: true)
    default:
      return reply(
        message, source, .errorResponse, [.errorCode(code: 400, reason: "Bad Request")], sign: true)
    }
  }

  private func reply(
    _ request: STUNMessage, _ client: ICETransportAddress, _ messageClass: STUNClass,
    _ attributes: [STUNAttribute], sign: Bool
  ) -> [(ICETransportAddress, ICETransportAddress, [UInt8])] {
    let response = STUNMessage(
      type: STUNMessageType(method: request.type.method, messageClass: messageClass),
      transactionID: request.transactionID, attributes: attributes)
    guard let encoded = try? response.encode(key: sign ? key : nil, fingerprint: true) else {
      return []
    }
    return [(address, client, encoded)]
  }
}
