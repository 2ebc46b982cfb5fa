/// A TURN server and the long-term credentials to use on it (RFC 8656).
public struct ICETURNServer: Hashable, Sendable {
  /// The server's transport address (its UDP, TCP or TLS port, by `transport`).
  public var address: ICETransportAddress
  /// Long-term credential username.
  public var username: String
  /// Long-term credential password (already SASLprep/OpaqueString-processed).
  public var password: String
  /// How the server is reached: UDP (the default), TCP or TLS.
  public var transport: ICETURNTransport
  /// The host name of the server's URL (`turns:turn.example.com`), which its TLS certificate
  /// must carry and which is sent as SNI; `nil`: the certificate must carry `address`'s IP.
  public var serverName: String?

  /// Makes a server entry.
  public init(
    address: ICETransportAddress, username: String, password: String,
    transport: ICETURNTransport = .udp, serverName: String? = nil
  ) {
    self.address = address
    self.username = username
    self.password = password
    self.transport = transport
    self.serverName = serverName
  }
}

/// What a `TURNClient` reports.
public enum TURNEvent: Equatable, Sendable {
  /// The allocation exists: the relayed address, the server-reflexive address the server saw,
  /// and the lifetime in seconds.
  case allocated(relayed: ICETransportAddress, mapped: ICETransportAddress?, lifetime: UInt32)
  /// The allocation failed or was lost (reason from the server or a timeout).
  case failed(String)
  /// A Data indication: `bytes` arrived at the relayed address from `peer`.
  case data(peer: ICETransportAddress, bytes: [UInt8])
}

/// A Sans-I/O TURN client (RFC 8656) over UDP, TCP or TLS (`server.transport`; for a stream
/// the driver carries each output datagram on the connection to the server, framed with
/// `ICEStreamFramer.frame(_:framing: .turn)`, and hands each frame it reads to `receive`,
/// and calls `transportClosed` when the connection ends): Allocate with the long-term credential mechanism
/// (401 → REALM/NONCE → signed retry; 438 → new nonce), Refresh before the lifetime ends,
/// CreatePermission per peer IP (refreshed every 4 minutes), Send and Data indications until
/// a channel is bound to the peer (ChannelBind, RFC 8656 §12, refreshed every 9 minutes), then
/// ChannelData both ways (4 bytes of header instead of 36). Datagrams go from `socket` to
/// `server.address`.
public final class TURNClient {
  /// The server in use.
  public let server: ICETURNServer
  /// The driver socket the allocation lives on.
  public let socket: ICESocketID
  /// The relayed address once allocated.
  public private(set) var relayedAddress: ICETransportAddress?
  /// Whether the allocation failed for good.
  public private(set) var failed = false
  /// Responses to signed requests dropped because they had no MESSAGE-INTEGRITY (other than
  /// an unsigned 401 or 438) or one that did not verify (RFC 8489 §9.2.5); their transaction
  /// keeps retransmitting, so a forged response cannot end or redirect the allocation.
  public private(set) var unauthenticatedResponses = 0

  private enum Request: Equatable {
    case allocate
    case refresh(lifetime: UInt32)
    case createPermission(ICEIPAddress)
    case channelBind(peer: ICETransportAddress, channel: UInt16)
  }

  /// A channel number given to a peer: bound once the server confirmed it.
  private struct Channel {
    var number: UInt16
    var bound = false
    /// When to bind it again (a binding lasts 10 minutes, RFC 8656 §12).
    var refreshAt: MediaInstant
  }

  private struct Transaction {
    var request: Request
    var bytes: [UInt8]
    var remaining: Int
    var timeout: MediaDuration
    var deadline: MediaInstant
    var authAttempts: Int
    /// The request carried MESSAGE-INTEGRITY, so its response must too.
    var signed: Bool
  }

  private var realm: String?
  private var nonce: String?
  private var key: STUNIntegrityKey?
  private var transactions: [STUNTransactionID: Transaction] = [:]
  private var permissions: [ICEIPAddress: MediaInstant] = [:]
  private var channels: [ICETransportAddress: Channel] = [:]
  private var channelPeers: [UInt16: ICETransportAddress] = [:]
  private var nextChannel: UInt16 = 0x4000
  /// Peers whose ChannelBind the server refused or never answered: not asked again, so a
  /// server without channels does not get a request per datagram.
  private var channelRefused: Set<ICETransportAddress> = []
  /// Channels bound so far (at most `maximumChannels`; peers past it use Send indications).
  public var boundChannels: Int { channels.values.count { $0.bound } }
  /// The most peers given a channel: ICE talks to a handful of remote candidates.
  public static let maximumChannels = 64
  /// ChannelData messages received for a channel not bound (dropped).
  public private(set) var unknownChannelData = 0
  private var refreshAt: MediaInstant?
  private var random: ICERandom
  private var datagrams: [ICEDatagram] = []
  private var events: [TURNEvent] = []
  /// Permissions last 300 s; refreshed after 240 s (RFC 8656 §9).
  private static let permissionRefresh = MediaDuration.seconds(240)
  /// Channel bindings last 600 s; bound again after 540 s (RFC 8656 §12).
  private static let channelRefresh = MediaDuration.seconds(540)
  /// Shortest wait before a Refresh: a server granting a tiny LIFETIME must not make
  /// the client refresh back to back.
  static let minimumRefreshDelay = MediaDuration.seconds(5)
  /// Ti: how long a request over TCP or TLS waits for its response (RFC 8489 §6.2.2).
  static let reliableTransactionTimeout = MediaDuration.milliseconds(39_500)
  /// First retransmission timeout of a request over UDP (the RTO of RFC 8489 §6.2.1), doubled
  /// per retransmission up to `maximumRetransmissionTimeout`, as ICE's checks are.
  static let initialRetransmissionTimeout = MediaDuration.milliseconds(250)
  static let maximumRetransmissionTimeout = MediaDuration.milliseconds(1600)

  /// Creates a client; nothing is sent until `start`.
  public init(server: ICETURNServer, socket: ICESocketID, randomSeed: UInt64? = nil) {
    self.server = server
    self.socket = socket
    random = ICERandom(seed: randomSeed)
  }

  /// Sends the first (unauthenticated) Allocate request for a UDP relay.
  public func start(now: MediaInstant) {
    send(.allocate, authAttempts: 0, now: now)
  }

  /// Datagrams to send to the server, oldest first.
  public func takeDatagrams() -> [ICEDatagram] {
    defer { datagrams.removeAll(keepingCapacity: true) }
    return datagrams
  }

  /// Events so far, oldest first.
  public func takeEvents() -> [TURNEvent] {
    defer { events.removeAll(keepingCapacity: true) }
    return events
  }

  /// When `handleTimeout` should run next.
  public var nextDeadline: MediaInstant? {
    guard !failed else { return nil }
    var deadline = transactions.values.map(\.deadline).min() ?? .distantFuture
    if let refreshAt { deadline = min(deadline, refreshAt) }
    if let permission = permissions.values.min() { deadline = min(deadline, permission) }
    if let channel = channels.values.lazy.map(\.refreshAt).min() {
      deadline = min(deadline, channel)
    }
    return deadline < .distantFuture ? deadline : nil
  }

  /// Installs a permission for `peer` (CreatePermission) unless one exists or is pending.
  public func ensurePermission(for peer: ICEIPAddress, now: MediaInstant) {
    guard !failed, relayedAddress != nil, permissions[peer] == nil else { return }
    // Marked at once so the next check does not ask again; refreshed after 240 s.
    permissions[peer] = now + Self.permissionRefresh
    send(.createPermission(peer), authAttempts: 0, now: now)
  }

  /// Sends `bytes` to `peer` through the relay: in ChannelData once a channel is bound to the
  /// peer (RFC 8656 §12.4), else in a Send indication (§11), asking for a channel on the way.
  public func send(_ bytes: [UInt8], to peer: ICETransportAddress, now: MediaInstant) {
    guard !failed, relayedAddress != nil else { return }
    if let channel = channels[peer], channel.bound, bytes.count <= 65535 {
      let length = bytes.count
      let header: [UInt8] = [
        UInt8(channel.number >> 8), UInt8(channel.number & 0xFF), UInt8(length >> 8),
        UInt8(length & 0xFF),
      ]
      datagrams.append(
        ICEDatagram(socket: socket, destination: server.address, bytes: header + bytes))
      return
    }
    ensurePermission(for: peer.ip, now: now)
    bindChannel(to: peer, now: now)
    let indication = STUNMessage(
      type: STUNMessageType(method: .send, messageClass: .indication),
      transactionID: .random(using: &random),
      attributes: [.xorPeerAddress(peer), .data(bytes)])
    guard let encoded = try? indication.encode(fingerprint: true) else { return }
    datagrams.append(ICEDatagram(socket: socket, destination: server.address, bytes: encoded))
  }

  /// Handles a datagram from the server: a STUN message or ChannelData (RFC 8656 §12.5; on a
  /// stream the framer already dropped the padding). Returns `false` when it is neither.
  @discardableResult
  public func receive(_ bytes: [UInt8], now: MediaInstant) -> Bool {
    if Self.isChannelData(bytes) {
      receiveChannelData(bytes)
      return true
    }
    guard let message = try? STUNMessage.decode(bytes) else { return false }
    if message.type == STUNMessageType(method: .data, messageClass: .indication) {
      if let peer = message.xorPeerAddress, let data = message.data {
        events.append(.data(peer: peer, bytes: data))
      }
      return true
    }
    guard let transaction = transactions[message.transactionID] else { return false }
    guard authenticated(message, for: transaction) else {
      unauthenticatedResponses += 1
      return true
    }
    transactions[message.transactionID] = nil
    if message.type.messageClass == .errorResponse {
      handleError(message, transaction, now: now)
    } else if message.type.messageClass == .successResponse {
      handleSuccess(message, transaction.request, now: now)
    }
    return true
  }

  /// Retransmits, refreshes the allocation and permissions when due.
  public func handleTimeout(now: MediaInstant) {
    guard !failed else { return }
    for (id, var transaction) in transactions where transaction.deadline <= now {
      if transaction.remaining > 0 {
        transaction.remaining -= 1
        transaction.timeout = min(transaction.timeout * 2, Self.maximumRetransmissionTimeout)
        transaction.deadline = now + transaction.timeout
        transactions[id] = transaction
        datagrams.append(
          ICEDatagram(socket: socket, destination: server.address, bytes: transaction.bytes))
      } else {
        transactions[id] = nil
        if case .createPermission(let peer) = transaction.request {
          permissions[peer] = nil
        } else if case .channelBind(let peer, _) = transaction.request {
          dropChannel(of: peer)
        } else {
          fail("\(transaction.request) timed out")
          return
        }
      }
    }
    if let refreshAt, now >= refreshAt {
      self.refreshAt = nil
      send(.refresh(lifetime: 600), authAttempts: 0, now: now)
    }
    for (peer, due) in permissions where due <= now {
      permissions[peer] = now + Self.permissionRefresh
      send(.createPermission(peer), authAttempts: 0, now: now)
    }
    for (peer, channel) in channels where channel.refreshAt <= now {
      channels[peer]?.refreshAt = now + Self.channelRefresh
      send(.channelBind(peer: peer, channel: channel.number), authAttempts: 0, now: now)
    }
  }

  /// Whether `bytes` is a ChannelData message: channel numbers 0x4000–0x4FFF (RFC 8656 §12).
  public static func isChannelData(_ bytes: [UInt8]) -> Bool {
    bytes.count >= 4 && bytes[0] >= 0x40 && bytes[0] <= 0x4F
  }

  private func receiveChannelData(_ bytes: [UInt8]) {
    let number = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
    let length = Int(bytes[2]) << 8 | Int(bytes[3])
    // Only a bound channel is taken, and only its announced length: over UDP the datagram may
    // be padded (RFC 8656 §12.5), a shorter one is malformed.
    guard let peer = channelPeers[number], channels[peer]?.bound == true, length <= bytes.count - 4
    else {
      unknownChannelData += 1
      return
    }
    events.append(.data(peer: peer, bytes: Array(bytes[4..<(4 + length)])))
  }

  /// Asks for a channel to `peer` unless it has one (bound or pending) or the limit is
  /// reached; the binding also installs the peer's permission (RFC 8656 §12.2).
  private func bindChannel(to peer: ICETransportAddress, now: MediaInstant) {
    guard channels[peer] == nil, !channelRefused.contains(peer),
      channels.count < Self.maximumChannels, nextChannel <= 0x4FFF
    else { return }
    let number = nextChannel
    nextChannel += 1
    channels[peer] = Channel(number: number, refreshAt: now + Self.channelRefresh)
    channelPeers[number] = peer
    send(.channelBind(peer: peer, channel: number), authAttempts: 0, now: now)
  }

  /// The TCP or TLS connection to the server ended or could not be made (RFC 8656 §3.1: the
  /// allocation lives and dies with it): the client fails with `reason`. Harmless after a
  /// failure.
  public func transportClosed(reason: String) {
    guard !failed else { return }
    fail(
      "connection to the TURN server \(server.address) (\(server.transport.rawValue)): \(reason)")
  }

  /// Releases the allocation (Refresh with LIFETIME 0, RFC 8656 §7).
  public func close(now: MediaInstant) {
    guard !failed, relayedAddress != nil else { return }
    send(.refresh(lifetime: 0), authAttempts: 0, now: now)
    refreshAt = nil
    permissions.removeAll()
    channels.removeAll()
    channelPeers.removeAll()
  }

  /// RFC 8489 §9.2.5: the response to a signed request must carry a MESSAGE-INTEGRITY that
  /// verifies with our key, except a 401 or 438 error, which a server cannot always sign (the
  /// nonce it would use is the one it is replacing); their retries stay bounded by
  /// `authAttempts`. A response to an unsigned request is checked only if it is signed.
  private func authenticated(_ message: STUNMessage, for transaction: Transaction) -> Bool {
    if message.messageIntegrity != nil {
      guard let key else { return !transaction.signed }
      return (try? message.verifyIntegrity(key: key)) != nil
    }
    guard transaction.signed else { return true }
    let code = message.errorCode?.code
    return message.type.messageClass == .errorResponse && (code == 401 || code == 438)
  }

  private func handleSuccess(_ response: STUNMessage, _ request: Request, now: MediaInstant) {
    switch request {
    case .allocate:
      guard let relayed = response.xorRelayedAddress else {
        fail("Allocate success without XOR-RELAYED-ADDRESS")
        return
      }
      let lifetime = response.lifetime ?? 600
      // RFC 8656 §7.3: LIFETIME 0 means there is no allocation.
      guard lifetime > 0 else {
        fail("Allocate success with LIFETIME 0")
        return
      }
      relayedAddress = relayed
      scheduleRefresh(lifetime: lifetime, now: now)
      events.append(
        .allocated(relayed: relayed, mapped: response.xorMappedAddress, lifetime: lifetime))
    case .refresh(let requested):
      guard requested > 0 else { break }
      let granted = response.lifetime ?? requested
      // A refresh granted for 0 s deleted the allocation (RFC 8656 §7.3).
      guard granted > 0 else {
        fail("Refresh success with LIFETIME 0: the server deleted the allocation")
        return
      }
      scheduleRefresh(lifetime: granted, now: now)
    case .createPermission:
      break
    case .channelBind(let peer, let number):
      // A refresh of a channel since replaced must not mark the new one bound.
      if channels[peer]?.number == number { channels[peer]?.bound = true }
    }
  }

  /// Forgets `peer`'s channel (its binding failed) for good: Send indications carry its data.
  private func dropChannel(of peer: ICETransportAddress) {
    guard let channel = channels.removeValue(forKey: peer) else { return }
    channelPeers[channel.number] = nil
    if channelRefused.count < Self.maximumChannels { channelRefused.insert(peer) }
  }

  /// Refreshes a minute before the lifetime ends, or at its half for short lifetimes, and
  /// never sooner than `minimumRefreshDelay`.
  private func scheduleRefresh(lifetime: UInt32, now: MediaInstant) {
    let granted = MediaDuration.seconds(Int(lifetime))
    refreshAt = now + max(Self.minimumRefreshDelay, granted * 0.5, granted - .seconds(60))
  }

  private func handleError(_ response: STUNMessage, _ transaction: Transaction, now: MediaInstant) {
    let code = response.errorCode?.code ?? 0
    // 401: first contact or wrong key; 438: the nonce went stale (RFC 8489 §9.2.4).
    if code == 401 || code == 438, transaction.authAttempts < 2,
      let realm = response.realm ?? self.realm, let nonce = response.nonce
    {
      if key == nil || realm != self.realm {
        key = try? STUNIntegrityKey.longTerm(
          username: server.username, realm: realm, password: server.password)
      }
      self.realm = realm
      self.nonce = nonce
      send(transaction.request, authAttempts: transaction.authAttempts + 1, now: now)
      return
    }
    let reason = response.errorCode.map { "\($0.code) \($0.reason)" } ?? "error response"
    switch transaction.request {
    case .allocate, .refresh:
      fail("\(transaction.request): \(reason)")
    case .createPermission(let peer):
      permissions[peer] = nil
    case .channelBind(let peer, _):
      dropChannel(of: peer)
    }
  }

  private func fail(_ reason: String) {
    failed = true
    transactions.removeAll()
    refreshAt = nil
    permissions.removeAll()
    channels.removeAll()
    channelPeers.removeAll()
    events.append(.failed(reason))
  }

  private func send(_ request: Request, authAttempts: Int, now: MediaInstant) {
    var attributes: [STUNAttribute]
    let method: STUNMethod
    switch request {
    case .allocate:
      method = .allocate
      attributes = [.requestedTransport(17)]
    case .refresh(let lifetime):
      method = .refresh
      attributes = [.lifetime(lifetime)]
    case .createPermission(let peer):
      method = .createPermission
      attributes = [.xorPeerAddress(ICETransportAddress(ip: peer, port: 0))]
    case .channelBind(let peer, let number):
      method = .channelBind
      attributes = [.channelNumber(number), .xorPeerAddress(peer)]
    }
    let signed = key != nil && realm != nil && nonce != nil
    if signed, let realm, let nonce {
      attributes += [.username(server.username), .realm(realm), .nonce(nonce)]
    }
    let message = STUNMessage(
      type: STUNMessageType(method: method, messageClass: .request),
      transactionID: .random(using: &random), attributes: attributes)
    guard let bytes = try? message.encode(key: signed ? key : nil, fingerprint: true) else {
      return
    }
    // Over a stream nothing is retransmitted: the transaction just times out after Ti
    // (RFC 8489 §6.2.2), so a server that accepts and never answers fails the allocation.
    let stream = server.transport.isStream
    let timeout = stream ? Self.reliableTransactionTimeout : Self.initialRetransmissionTimeout
    transactions[message.transactionID] = Transaction(
      request: request, bytes: bytes, remaining: stream ? 0 : 6, timeout: timeout,
      deadline: now + timeout, authAttempts: authAttempts, signed: signed)
    datagrams.append(ICEDatagram(socket: socket, destination: server.address, bytes: bytes))
  }
}
