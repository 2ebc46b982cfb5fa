import WCSMedia
import XCTest

/// An in-memory UDP network with a virtual clock: routes datagrams from ICE agents by
/// destination address, with zero latency, optional drop rules and a scripted STUN server.
final class VirtualNetwork {
  struct Route {
    var agent: Int
    var socket: ICESocketID
  }

  private(set) var agents: [ICEAgent] = []
  private var routes: [ICETransportAddress: Route] = [:]
  private var socketAddresses: [Int: [ICESocketID: ICETransportAddress]] = [:]
  /// Every output of every agent, with the time (`elapsed`) and the agent index.
  private(set) var log: [(time: Double, agent: Int, output: ICEOutput)] = []
  /// The network's clock, handed to the agents; starts at `virtualTime(0)`.
  var now = virtualTime(0)
  /// Seconds of virtual time since the network started.
  var elapsed: Double { (now - virtualTime(0)).seconds }
  /// Drops every datagram when true.
  var dropAll = false
  /// A STUN server at this address answers Binding requests with `mappedAddressForServer`.
  var stunServer: ICETransportAddress?
  var mappedAddressForServer: ICETransportAddress?
  /// A TURN server, when the test adds one.
  var turnServer: FakeTURNServer?
  /// Drops a datagram when this returns true for (source, destination).
  var isBlocked: (ICETransportAddress, ICETransportAddress) -> Bool = { _, _ in false }
  /// Datagrams the agents did not consume as STUN (application data), per agent.
  private(set) var applicationData: [(agent: Int, result: ICEReceiveResult, bytes: [UInt8])] = []

  @discardableResult
  func add(_ agent: ICEAgent) -> Int {
    agents.append(agent)
    return agents.count - 1
  }

  func bind(_ agentIndex: Int, socket: ICESocketID, address: ICETransportAddress) {
    routes[address] = Route(agent: agentIndex, socket: socket)
    socketAddresses[agentIndex, default: [:]][socket] = address
    agents[agentIndex].addLocalSocket(socket, address: address, now: now)
  }

  /// Delivers every pending output until the network is quiet.
  func flush() {
    var progress = true
    while progress {
      progress = false
      for index in agents.indices {
        let outputs = agents[index].takeOutputs()
        if !outputs.isEmpty { progress = true }
        for output in outputs {
          log.append((elapsed, index, output))
          if case .send(let datagram) = output { deliver(datagram, from: index) }
        }
      }
    }
  }

  /// Also used by tests to inject hostile datagrams.
  func inject(
    _ bytes: [UInt8], from source: ICETransportAddress, to destination: ICETransportAddress
  ) {
    if let turnServer, turnServer.owns(destination) {
      for (from, to, payload) in turnServer.handle(bytes, from: source, to: destination) {
        inject(payload, from: from, to: to)
      }
      return
    }
    guard let route = routes[destination] else { return }
    let result = agents[route.agent].receive(bytes, from: source, socket: route.socket, now: now)
    if result != .handled { applicationData.append((route.agent, result, bytes)) }
  }

  /// Sends application bytes from an agent the way a driver would.
  func sendApplication(_ datagram: ICEDatagram, from agentIndex: Int) {
    deliver(datagram, from: agentIndex)
    flush()
  }

  private func deliver(_ datagram: ICEDatagram, from agentIndex: Int) {
    guard !dropAll, let source = socketAddresses[agentIndex]?[datagram.socket],
      !isBlocked(source, datagram.destination)
    else { return }
    if datagram.destination == stunServer {
      answerAsSTUNServer(datagram.bytes, from: source)
      return
    }
    inject(datagram.bytes, from: source, to: datagram.destination)
  }

  private func answerAsSTUNServer(_ bytes: [UInt8], from source: ICETransportAddress) {
    guard let server = stunServer, let request = try? STUNMessage.decode(bytes),
      request.type == .bindingRequest
    else { return }
    let response = STUNMessage(
      type: .bindingSuccess, transactionID: request.transactionID,
      attributes: [.xorMappedAddress(mappedAddressForServer ?? source)])
    guard let encoded = try? response.encode(fingerprint: true) else { return }
    inject(encoded, from: server, to: source)
  }

  /// Runs timers and traffic until `until` (virtual seconds) or until `stop` returns true.
  func run(until limit: Double, stop: () -> Bool = { false }) {
    flush()
    var iterations = 0
    while !stop() {
      iterations += 1
      // A deadline that handleTimeout does not consume would spin forever.
      guard iterations < 200_000 else {
        XCTFail("an agent deadline is never consumed (now \(now))")
        return
      }
      let next = agents.compactMap(\.nextDeadline).min()
      guard let next, next <= virtualTime(limit) else {
        now = max(now, virtualTime(limit))
        return
      }
      now = max(now, next)
      for agent in agents where (agent.nextDeadline ?? .distantFuture) <= now {
        agent.handleTimeout(now: now)
      }
      flush()
    }
  }

  func states(of agent: Int) -> [ICEConnectionState] {
    log.compactMap {
      if $0.agent == agent, case .stateChanged(let state) = $0.output { state } else { nil }
    }
  }

  func stateTimes(of agent: Int) -> [(Double, ICEConnectionState)] {
    log.compactMap {
      if $0.agent == agent, case .stateChanged(let state) = $0.output {
        ($0.time, state)
      } else {
        nil
      }
    }
  }

  func sent(by agent: Int) -> [ICEDatagram] {
    log.compactMap {
      if $0.agent == agent, case .send(let datagram) = $0.output { datagram } else { nil }
    }
  }
}
