import Dispatch
import Synchronization

/// Carries the SIP side's events onto the server's queue; created before the server exists.
final class SIPEventRelay: Sendable {
  struct WeakServer: Sendable { weak var value: WCSLocalServer? }
  final class Target: Sendable { let server = Mutex(WeakServer()) }
  let gateway: SIPGateway?
  private let target: Target

  private init(gateway: SIPGateway?, target: Target) {
    self.gateway = gateway
    self.target = target
  }

  /// Opens the gateway's SIP socket when `configuration` is given.
  /// - Throws: `WCSLocalServerStartError.listen` when libre cannot bind it.
  static func open(_ configuration: SIPGatewayConfiguration?) throws(WCSLocalServerStartError)
    -> SIPEventRelay
  {
    let target = Target()
    guard let configuration else { return SIPEventRelay(gateway: nil, target: target) }
    do {
      let gateway = try SIPGateway(configuration) { [target] event in
        guard let server = target.server.withLock({ $0.value }) else { return }
        server.queue.async { server.sipEventArrived(event) }
      }
      return SIPEventRelay(gateway: gateway, target: target)
    } catch {
      throw .listen(WebSocketServerStartFailure(listener: "sip", reason: error.description))
    }
  }

  func attach(_ server: WCSLocalServer) {
    target.server.withLock { $0.value = server }
  }
}

extension WCSLocalServer {
  func attach(_ relay: SIPEventRelay) {
    sipGateway = relay.gateway
    relay.gateway?.attach(callMedia: engine as? any CallMediaPort)
    relay.attach(self)
  }

  func sipEventArrived(_ event: SIPGatewayEvent) {
    execute(coreSIPEvent(event))
  }

  /// The gateway's SIP port, `nil` without a gateway.
  public var sipPort: UInt16? { sipGateway?.port }

  /// What each live gateway call's RTP leg received.
  public func sipLegStatistics() -> [SIPLegStatistics] { sipGateway?.legStatistics() ?? [] }
}
