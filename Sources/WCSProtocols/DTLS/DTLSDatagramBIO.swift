import COpenSSL

/// The datagrams between one OpenSSL `SSL` object and its Sans-I/O owner.
///
/// OpenSSL's memory BIO concatenates writes and so loses datagram boundaries; this object sits
/// behind a custom BIO (`DTLSDatagramBIO`) that keeps them. Records OpenSSL writes are packed into
/// datagrams of at most `mtu` bytes; a flush (OpenSSL flushes at the end of every flight) or a
/// record that would not fit closes the current datagram. `BIO_CTRL_WPENDING` reports the open
/// datagram's size so OpenSSL fragments handshake messages into the space left (RFC 6347 §4.2.3).
///
/// It is also the state OpenSSL's per-connection callbacks reach through `SSL` app data (timer,
/// certificate verification).
///
/// Touched only from the thread that drives the owning `DTLSEndpoint`.
final class DTLSDatagramChannel {
  let mtu: Int
  /// First retransmission timeout handed to OpenSSL's DTLS timer callback, in microseconds.
  var initialTimeoutMicroseconds: UInt32
  /// Cap of the doubling retransmission timeout, in microseconds.
  let maxTimeoutMicroseconds: UInt32
  /// The peer's SDP fingerprints (any may match), checked during the handshake when already
  /// known; empty until then.
  var expectedPeerFingerprints: [DTLSFingerprint] = []
  /// Why the verify callback rejected the peer certificate, for the failure event.
  var peerRejection: DTLSError?
  /// Retransmission timer expiries OpenSSL handled, each followed by a retransmitted flight;
  /// counted in the timer callback because OpenSSL also retransmits on its own inside reads.
  var timerExpiries = 0
  private var inbound: [[UInt8]] = []
  private var outbound: [[UInt8]] = []
  private var current: [UInt8] = []

  init(mtu: Int, initialTimeoutMicroseconds: UInt32, maxTimeoutMicroseconds: UInt32) {
    self.mtu = mtu
    self.initialTimeoutMicroseconds = initialTimeoutMicroseconds
    self.maxTimeoutMicroseconds = maxTimeoutMicroseconds
  }

  /// Queues one received datagram; OpenSSL reads it with one `BIO_read`.
  func enqueueInbound(_ datagram: [UInt8]) {
    inbound.append(datagram)
  }

  /// Drops datagrams OpenSSL did not read (it stops reading only after a fatal error).
  func discardInbound() {
    inbound.removeAll()
  }

  /// The datagrams written since the last call, in order, the open one included.
  func takeOutbound() -> [[UInt8]] {
    closeCurrent()
    let datagrams = outbound
    outbound.removeAll()
    return datagrams
  }

  fileprivate var pendingOutboundCount: Int { current.count }
  fileprivate var nextInboundCount: Int { inbound.first?.count ?? 0 }

  fileprivate func write(_ bytes: UnsafeRawBufferPointer) {
    if !current.isEmpty && current.count + bytes.count > mtu {
      closeCurrent()
    }
    current.append(contentsOf: bytes)
  }

  /// Copies the next datagram into `buffer` (truncated if it is larger, as a UDP socket does);
  /// `nil` when none is queued.
  fileprivate func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
    guard !inbound.isEmpty else { return nil }
    let datagram = inbound.removeFirst()
    let count = min(datagram.count, buffer.count)
    datagram.withUnsafeBytes { source in
      if count > 0, let from = source.baseAddress, let to = buffer.baseAddress {
        to.copyMemory(from: from, byteCount: count)
      }
    }
    return count
  }

  fileprivate func closeCurrent() {
    if !current.isEmpty {
      outbound.append(current)
      current.removeAll()
    }
  }
}

/// The process-wide `BIO_METHOD` whose callbacks forward to a `DTLSDatagramChannel`.
///
/// OpenSSL has only 127 custom BIO type indexes, so the method is made once and shared.
final class DTLSDatagramBIO: @unchecked Sendable {
  // @unchecked Sendable: `method` is written once in init and only read afterwards; OpenSSL reads
  // a BIO_METHOD from any thread without mutating it.
  private let method: OpaquePointer?

  static let shared = DTLSDatagramBIO()

  private init() {
    let index = BIO_get_new_index()
    guard index > 0, let method = BIO_meth_new(index | BIO_TYPE_SOURCE_SINK, "wcs-dtls-datagram")
    else {
      self.method = nil
      return
    }
    BIO_meth_set_create(method) { bio in
      BIO_set_init(bio, 1)
      return 1
    }
    BIO_meth_set_destroy(method) { bio in
      BIO_set_data(bio, nil)
      BIO_set_init(bio, 0)
      return 1
    }
    BIO_meth_set_write(method) { bio, data, length in
      guard let bio, let channel = DTLSDatagramBIO.channel(of: bio) else { return -1 }
      DTLSDatagramBIO.clearRetryFlags(bio)
      guard length > 0, let data else { return 0 }
      channel.write(UnsafeRawBufferPointer(start: data, count: Int(length)))
      return length
    }
    BIO_meth_set_read(method) { bio, data, length in
      guard let bio, let channel = DTLSDatagramBIO.channel(of: bio) else { return -1 }
      DTLSDatagramBIO.clearRetryFlags(bio)
      guard length > 0, let data else { return 0 }
      let buffer = UnsafeMutableRawBufferPointer(start: data, count: Int(length))
      guard let count = channel.read(into: buffer) else {
        BIO_set_flags(bio, BIO_FLAGS_READ | BIO_FLAGS_SHOULD_RETRY)
        return -1
      }
      return Int32(count)
    }
    BIO_meth_set_ctrl(method) { bio, command, _, _ in
      guard let bio, let channel = DTLSDatagramBIO.channel(of: bio) else { return 0 }
      switch command {
      case BIO_CTRL_FLUSH:
        channel.closeCurrent()
        return 1
      case BIO_CTRL_WPENDING:
        return channel.pendingOutboundCount
      case BIO_CTRL_PENDING:
        return channel.nextInboundCount
      default:
        // Everything else (MTU queries, peer addresses, timeouts) is unsupported: the
        // endpoint sets the MTU itself with SSL_OP_NO_QUERY_MTU and DTLS_set_link_mtu.
        return 0
      }
    }
    self.method = method
  }

  /// A new BIO feeding `channel`, which must outlive it; `nil` if OpenSSL could not make one.
  func makeBIO(for channel: DTLSDatagramChannel) -> OpaquePointer? {
    guard let method, let bio = BIO_new(method) else { return nil }
    BIO_set_data(bio, Unmanaged.passUnretained(channel).toOpaque())
    return bio
  }

  /// `BIO_clear_retry_flags` (a macro built on `BIO_FLAGS_RWS`, which Swift does not import).
  private static func clearRetryFlags(_ bio: OpaquePointer) {
    let readWriteSpecial = BIO_FLAGS_READ | BIO_FLAGS_WRITE | BIO_FLAGS_IO_SPECIAL
    BIO_clear_flags(bio, readWriteSpecial | BIO_FLAGS_SHOULD_RETRY)
  }

  private static func channel(of bio: OpaquePointer) -> DTLSDatagramChannel? {
    guard let data = BIO_get_data(bio) else { return nil }
    return Unmanaged<DTLSDatagramChannel>.fromOpaque(data).takeUnretainedValue()
  }
}
