import WCSEventLoop
import WCSMediaSeam
import WCSPeerConnection
import WCSProtocols

/// A network change under the connection (Wi-Fi to wired, a VPN coming up, a cable pulled),
/// seen in the kernel's rtnetlink reports rather than by polling: the connection fails with
/// `.networkChanged`, on which the SDK restarts ICE (RFC 8445 §9) with candidates gathered on
/// the addresses there are now.
extension NativeMediaConnection {
  /// Opens the rtnetlink watch (`PeerConnectionConfiguration.watchesNetworkChanges`). Without
  /// netlink (a sandbox refusing the socket) the connection still works; only consent loss
  /// then restarts it.
  func watchNetworkChanges() {
    loop.assertInEventLoop()
    guard configuration.peerConnection.watchesNetworkChanges, hostAddressWatcher == nil else {
      return
    }
    let reference = WeakReference(self)
    hostAddressWatcher = try? EventLoopHostAddressWatcher(loop: loop) { changes in
      reference.object?.hostAddressesChanged(changes)
    }
  }

  /// Fails the connection with `.networkChanged` when `changes` remove an address it uses, or
  /// add a usable one while it is disconnected (consent lost, RFC 7675).
  func hostAddressesChanged(_ changes: [HostAddressChange]) {
    loop.assertInEventLoop()
    guard !closed, !state.isFailed, let peerConnection else { return }
    let disconnected = if case .disconnected = peerConnection.state { true } else { false }
    for change in changes {
      switch change {
      case .removed(let ip, _) where addressesInUse(peerConnection).contains(ip):
        stopMedia()
        report(.failed(.networkChanged("address \(ip) in use was removed")))
        return
      case .added(let ip, _) where disconnected && isUsable(ip):
        stopMedia()
        report(.failed(.networkChanged("address \(ip) appeared while disconnected")))
        return
      default:
        continue
      }
    }
  }

  /// The addresses the media goes through: the selected pair's host address, or (relayed,
  /// server-reflexive, or nothing selected yet) every socket's.
  private func addressesInUse(_ peerConnection: PeerConnection) -> Set<ICEIPAddress> {
    if let pair = peerConnection.stats.selectedPair, pair.local.type == .host {
      return [pair.local.address.ip]
    }
    return Set(peerConnection.localAddresses.map(\.ip))
  }

  /// Whether a restart could gather a host candidate on `ip`: not link-local, loopback only
  /// where the configuration allows it, one of `hostAddresses` when those are given.
  private func isUsable(_ ip: ICEIPAddress) -> Bool {
    let configuration = configuration.peerConnection
    if ip.isLinkLocal || (ip.isLoopback && !configuration.allowLoopback) { return false }
    return configuration.hostAddresses?.contains(ip) ?? true
  }
}
