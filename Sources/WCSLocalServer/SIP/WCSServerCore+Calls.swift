import Foundation
import WCSTransport

/// One call through the gateway: its WebSocket session, its SIP session number and where it is.
struct ServerCall: Sendable, Equatable {
  let callId: String
  let owner: WCSConnectionID
  let sipCall: UInt32
  let incoming: Bool
  var caller: String
  var callee: String
  var visibleName: String
  /// Status last sent to the client.
  var status = "PENDING"
  var sipStatus = 0
  /// The WebRTC leg's media was asked for (`createPublisher` keyed by `callId`).
  var mediaRequested = false
  /// No final answer by then (ms since the Unix epoch): FAILED `Failed by request timeout`.
  var deadline: Int64?
}

/// Calls, SIP accounts and SIP session numbers of the gateway (wcs-rooms-and-calls.md §B.11).
struct ServerCallDirectory {
  var calls: [String: ServerCall] = [:]
  var bySIPCall: [UInt32: String] = [:]
  var accounts: [WCSConnectionID: SIPAccount] = [:]
  var nextSIPCall: UInt32 = 1

  mutating func allocateSIPCall() -> UInt32 {
    defer { nextSIPCall = nextSIPCall >= 0x7fff_ffff ? 1 : nextSIPCall + 1 }
    return nextSIPCall
  }

  func calls(of owner: WCSConnectionID) -> [ServerCall] {
    calls.values.filter { $0.owner == owner }.sorted { $0.callId < $1.callId }
  }
}

/// Bounds and timers of the gateway's calls.
public struct WCSCallLimits: Sendable, Equatable {
  /// Live calls one session may hold; more get FAILED at once.
  public var maxCallsPerSession = 8
  /// Live calls over all sessions.
  public var maxCalls = 200
  /// How long (ms) an outgoing INVITE may go unanswered before it is cancelled with FAILED
  /// `Failed by request timeout` (RFC 3261 Timer C is 3 minutes; WCS's default is shorter).
  public var noAnswerTimeoutMillis: Int64 = 60_000
  /// Longest `callId`, callee, caller or transfer target accepted.
  public var maxFieldLength = 256
  /// Longest SDP accepted in `call`/`answer`.
  public var maxSDPLength = 64 * 1024

  /// Defaults.
  public init() {}
}

extension WCSServerCore {
  /// The call messages of the client (§B.4).
  static let callMessageNames: Set<String> = [
    "call", "answer", "hangup", "hold", "unhold", "sendDtmf", "transfer",
  ]

  /// The earliest call deadline, for `nextDeadline`.
  var nextCallDeadline: Int64? { calls.calls.values.compactMap(\.deadline).min() }

  // MARK: session inputs

  /// `connection` with SIP fields: keeps the account; REGISTER when `sipRegisterRequired`.
  func sipAccountConnected(_ id: WCSConnectionID, _ object: [String: JSONValue]) {
    guard let login = object["sipLogin"]?.stringValue, !login.isEmpty,
      login.count <= configuration.calls.maxFieldLength
    else { return }
    let domain = object["sipDomain"]?.stringValue ?? "127.0.0.1"
    let port: Int =
      object["sipPort"]?.intValue ?? object["sipPort"]?.stringValue.flatMap { Int($0) } ?? 5060
    let register: Bool =
      object["sipRegisterRequired"]?.boolValue
      ?? (object["sipRegisterRequired"]?.stringValue == "true")
    let account = SIPAccount(
      login: login,
      authenticationName: object["sipAuthenticationName"]?.stringValue ?? login,
      password: object["sipPassword"]?.stringValue ?? "", domain: domain,
      outboundProxy: object["sipOutboundProxy"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        ?? domain,
      port: (1...65535).contains(port) ? port : 5060,
      visibleName: object["sipVisibleName"]?.stringValue ?? login, registerRequired: register)
    calls.accounts[id] = account
    if register {
      actions.append(.sip(.register(session: id.rawValue, account: account, expires: 3600)))
    }
  }

  /// The session closed: its calls end on the SIP side, its registration is removed.
  func callsSessionEnded(_ id: WCSConnectionID) {
    for call in calls.calls(of: id) {
      actions.append(
        .sip(.hangup(call: call.sipCall, code: 480, reason: "Temporarily Unavailable")))
      forget(call)
    }
    if calls.accounts.removeValue(forKey: id)?.registerRequired == true {
      actions.append(.sip(.unregister(session: id.rawValue)))
    }
  }

  /// Cancels outgoing calls that got no final answer in time.
  func callTick(now: Int64) {
    for call in calls.calls.values.sorted(by: { $0.callId < $1.callId }) {
      guard let deadline = call.deadline, deadline <= now else { continue }
      actions.append(.sip(.hangup(call: call.sipCall, code: 0, reason: "")))
      end(call, status: "FAILED", info: "Failed by request timeout")
    }
  }

  // MARK: client messages

  func handleCallMessage(_ id: WCSConnectionID, _ message: WCSMessage, now: Int64) {
    guard let object = message.argument?.objectValue else {
      reject(id, .argumentNotAnObject(message: message.name))
      return
    }
    let limits = configuration.calls
    guard let callId = object["callId"]?.stringValue, !callId.isEmpty,
      callId.count <= limits.maxFieldLength
    else {
      reject(id, .missingField("callId"))
      return
    }
    if message.name == "call" {
      placeCall(id, callId, object, now: now)
      return
    }
    guard let call = calls.calls[callId], call.owner == id else {
      log("session \(id): \(message.name) for unknown call \(callId) ignored")
      return
    }
    switch message.name {
    case "answer": answerCall(call, object)
    case "hangup":
      let code: UInt16 = call.incoming && call.status != "ESTABLISHED" ? 486 : 0
      actions.append(.sip(.hangup(call: call.sipCall, code: code, reason: "Busy Here")))
      end(call, status: "FINISH", info: "Normal call clearing")
    case "hold", "unhold":
      let on = message.name == "hold"
      guard call.status == (on ? "ESTABLISHED" : "HOLD") else {
        log("call \(callId): \(message.name) in \(call.status) ignored")
        return
      }
      actions.append(.sip(.hold(call: call.sipCall, on: on)))
      report(call, on ? "HOLD" : "ESTABLISHED", message: on ? "hold" : "talk")
    case "sendDtmf":
      let digits = (object["dtmf"]?.stringValue ?? "").uppercased()
      let allowed = Set("0123456789*#ABCD")
      guard call.status == "ESTABLISHED", !digits.isEmpty, digits.count <= 64,
        digits.allSatisfy(allowed.contains)
      else {
        log("call \(callId): sendDtmf '\(digits.prefix(80))' in \(call.status) ignored")
        return
      }
      let type = object["type"]?.stringValue?.uppercased() ?? "RFC2833"
      actions.append(.sip(.dtmf(call: call.sipCall, digits: digits, info: type.hasPrefix("INFO"))))
    case "transfer":
      guard let target = object["target"]?.stringValue, !target.isEmpty,
        target.count <= limits.maxFieldLength, let account = calls.accounts[id]
      else {
        reject(id, .missingField("target"))
        return
      }
      actions.append(.sip(.refer(call: call.sipCall, uri: account.uri(for: target))))
    default: break
    }
  }

  private func placeCall(
    _ id: WCSConnectionID, _ callId: String, _ object: [String: JSONValue], now: Int64
  ) {
    let limits = configuration.calls
    let callee = object["callee"]?.stringValue ?? ""
    let sdp = object["sdp"]?.stringValue ?? ""
    var refusal: String?
    if calls.calls[callId] != nil {
      refusal = "Call \(callId) already exists"
    } else if callee.isEmpty || callee.count > limits.maxFieldLength {
      refusal = "Failed by error: callee must be 1...\(limits.maxFieldLength) characters"
    } else if sdp.isEmpty || sdp.utf8.count > limits.maxSDPLength {
      refusal = "Failed by error: sdp must be 1...\(limits.maxSDPLength) bytes"
    } else if !configuration.sipGatewayEnabled {
      refusal = "Failed by error: the SIP gateway is off"
    } else if calls.calls(of: id).count >= limits.maxCallsPerSession
      || calls.calls.count >= limits.maxCalls
    {
      refusal = "Failed by error: too many calls"
    }
    if let refusal {
      send(
        id,
        ServerMessages.text(
          "finish", [["callId": .string(callId), "status": "FAILED", "info": .string(refusal)]]))
      log("session \(id): call \(callId) refused: \(refusal)")
      return
    }
    let account =
      calls.accounts[id]
      ?? SIPAccount(
        login: object["caller"]?.stringValue ?? "", authenticationName: "", password: "",
        domain: "127.0.0.1", outboundProxy: "127.0.0.1", port: 5060, visibleName: "",
        registerRequired: false)
    let visibleName = object["visibleName"]?.stringValue ?? account.visibleName
    var headers: [String: String] = [:]
    for (key, value) in object["inviteParameters"]?.objectValue ?? [:] {
      guard let text = value.stringValue, Self.isHeaderToken(key), !text.contains("\r"),
        !text.contains("\n"), headers.count < 16
      else { continue }
      headers[key] = String(text.prefix(limits.maxFieldLength))
    }
    var call = ServerCall(
      callId: callId, owner: id, sipCall: calls.allocateSIPCall(), incoming: false,
      caller: account.login, callee: callee, visibleName: String(visibleName.prefix(256)))
    call.deadline = now + limits.noAnswerTimeoutMillis
    call.mediaRequested = true
    calls.calls[callId] = call
    calls.bySIPCall[call.sipCall] = callId
    log("session \(id): call \(callId) to \(account.uri(for: callee))")
    actions.append(.media(.createPublisher(mediaRequest(call, sdp))))
    actions.append(
      .sip(
        .invite(
          call: call.sipCall, session: id.rawValue, uri: account.uri(for: callee),
          account: account, visibleName: call.visibleName, headers: headers,
          video: sdp.contains("m=video"))))
    // §B.12a: many user agents never send 100; TRYING goes out with the INVITE.
    report(call, "TRYING", message: "notifyTryingResponse")
  }

  private func answerCall(_ call: ServerCall, _ object: [String: JSONValue]) {
    guard call.incoming, !call.mediaRequested else { return }
    let sdp = object["sdp"]?.stringValue ?? ""
    guard !sdp.isEmpty, sdp.utf8.count <= configuration.calls.maxSDPLength else {
      actions.append(.sip(.hangup(call: call.sipCall, code: 488, reason: "Not Acceptable Here")))
      end(call, status: "FAILED", info: "Failed by error: answer without an SDP")
      return
    }
    var updated = call
    updated.mediaRequested = true
    calls.calls[call.callId] = updated
    actions.append(.media(.createPublisher(mediaRequest(updated, sdp))))
    actions.append(.sip(.answer(call: call.sipCall, video: sdp.contains("m=video"))))
  }

  private func mediaRequest(_ call: ServerCall, _ sdp: String) -> LocalServerPublisherRequest {
    LocalServerPublisherRequest(
      mediaSessionId: call.callId, streamName: "sip-call-\(call.callId)", offerSDP: sdp,
      record: false, hasAudio: true, hasVideo: sdp.contains("m=video"), minBitrate: 0,
      maxBitrate: 0)
  }

  // MARK: SIP and media inputs

  /// An event from the SIP side of the gateway.
  public func sipEvent(_ event: SIPGatewayEvent, now: Int64) -> [WCSServerAction] {
    switch event {
    case .registration(let session, let code, let reason):
      let id = WCSConnectionID(session)
      guard sessions[id] != nil else { break }
      if code == 200 {
        send(id, ServerMessages.text("registered", [["status": "REGISTERED"]]))
      } else {
        send(
          id,
          ServerMessages.text(
            "fail",
            [
              [
                "apiMethod": "RegistrationStatusEvent",
                "status": code == 401 || code == 403 ? "AUTHENTICATION_FAIL" : "UNREGISTERED",
                "info": .string("\(code) \(reason)"),
              ]
            ]))
      }
    case .progress(let sipCall, let code, _):
      guard var call = call(sipCall) else { break }
      call.sipStatus = code
      calls.calls[call.callId] = call
      if code == 180 {
        report(call, "RING", message: "ring")
      } else if code == 183 {
        report(call, "SESSION_PROGRESS", message: "ring")
      }
    case .established(let sipCall):
      guard var call = call(sipCall) else { break }
      call.deadline = nil
      call.sipStatus = 200
      calls.calls[call.callId] = call
      report(call, "ESTABLISHED", message: "talk")
    case .closed(let sipCall, let code, let reason):
      guard let call = call(sipCall) else { break }
      if code == 486 || code == 600 {
        end(call, status: "BUSY", info: reason, sipStatus: code)
      } else if code >= 300 {
        end(call, status: "FAILED", info: "\(code) \(reason)", sipStatus: code)
      } else if reason == "BYE" {
        end(call, status: "FINISH", info: "Normal call clearing")
      } else {
        end(call, status: "FAILED", info: "Failed by error: \(reason)")
      }
    case .incoming(let sipCall, let user, let from, let displayName, let video):
      incomingCall(
        sipCall, user: user, from: from, displayName: displayName, video: video, now: now)
    case .mediaFailed(let sipCall, let reason):
      guard let call = call(sipCall) else { break }
      actions.append(.sip(.hangup(call: sipCall, code: 488, reason: "Not Acceptable Here")))
      end(call, status: "FAILED", info: "Failed by error: \(reason)")
    case .dtmf(let sipCall, let digit, let info):
      guard let call = call(sipCall), call.status == "ESTABLISHED" || call.status == "HOLD"
      else { break }
      // No S→C DTMF message is documented (§B.7): `notifyDtmf` mirrors `sendDtmf`'s fields.
      send(
        call.owner,
        ServerMessages.text(
          "notifyDtmf",
          [
            [
              "callId": .string(call.callId), "dtmf": .string(digit),
              "type": .string(info ? "INFO" : "RFC2833"),
            ]
          ]))
    case .transfer(let sipCall, let code):
      guard let call = call(sipCall) else { break }
      let status =
        code == 202 ? "ACCEPTED" : code < 200 ? "TRYING" : code < 300 ? "COMPLETED" : "FAILED"
      send(
        call.owner,
        ServerMessages.text(
          "notifyTransferEvent", [["callId": .string(call.callId), "status": .string(status)]]))
    }
    return flush()
  }

  private func incomingCall(
    _ sipCall: UInt32, user: String, from: String, displayName: String, video: Bool, now: Int64
  ) {
    let owner = calls.accounts.keys.sorted().first { calls.accounts[$0]?.login == user }
    guard let owner, calls.calls(of: owner).count < configuration.calls.maxCallsPerSession,
      calls.calls.count < configuration.calls.maxCalls
    else {
      log("sip: incoming call for \(user.prefix(64)) refused: no such session or too many calls")
      actions.append(.sip(.hangup(call: sipCall, code: 404, reason: "Not Found")))
      return
    }
    let callId = UUID().uuidString.lowercased()
    let caller = Self.userPart(from)
    let call = ServerCall(
      callId: callId, owner: owner, sipCall: sipCall, incoming: true,
      caller: String(caller.prefix(256)), callee: user,
      visibleName: String((displayName.isEmpty ? caller : displayName).prefix(256)))
    calls.calls[callId] = call
    calls.bySIPCall[sipCall] = callId
    var object = callObject(call, status: "RING")
    object["incoming"] = true
    // §B.3: `hasAudio`/`hasVideo` say what the caller offers; the client picks its answer by it.
    object["hasAudio"] = true
    object["hasVideo"] = .bool(video)
    send(owner, ServerMessages.text("notifyIncomingCall", [.object(object)]))
    log("session \(owner): incoming call \(callId) from \(from.prefix(128))")
  }

  /// Media of a call's WebRTC leg; `false` when `event` is for a stream.
  func handleCallMedia(_ event: LocalServerMediaEvent, now: Int64) -> Bool {
    switch event {
    case .answerReady(let id, let sdp):
      guard let call = calls.calls[id] else { return false }
      send(call.owner, ServerMessages.setRemoteSDP(mediaSessionId: id, sdp: sdp))
    case .connected(let id, _):
      guard let call = calls.calls[id] else { return false }
      log("call \(id): WebRTC leg connected")
      actions.append(.sip(.bridge(call: call.sipCall, mediaSessionId: id)))
    case .failed(let id, let reason):
      guard let call = calls.calls[id] else { return false }
      actions.append(.sip(.hangup(call: call.sipCall, code: 0, reason: "")))
      end(call, status: "FAILED", info: reason)
    case .recordingFinished(let id, _):
      return calls.calls[id] != nil
    case .snapshotTaken, .snapshotFailed, .videoRate, .rtmpPushStatus:
      // Snapshots are of streams, answered by request id (WCSServerCore+Snapshot.swift);
      // video rates are of streams too (WCSServerCore+VideoRate.swift).
      return false
    }
    return true
  }

  // MARK: helpers

  private func call(_ sipCall: UInt32) -> ServerCall? {
    calls.bySIPCall[sipCall].flatMap { calls.calls[$0] }
  }

  private func callObject(_ call: ServerCall, status: String) -> [String: JSONValue] {
    var object: [String: JSONValue] = [
      "callId": .string(call.callId), "status": .string(status), "caller": .string(call.caller),
      "callee": .string(call.callee), "visibleName": .string(call.visibleName),
      "incoming": .bool(call.incoming),
    ]
    if call.sipStatus > 0 { object["sipStatus"] = .number(Double(call.sipStatus)) }
    return object
  }

  private func report(_ call: ServerCall, _ status: String, message: String) {
    var updated = call
    updated.status = status
    calls.calls[call.callId] = updated
    send(call.owner, ServerMessages.text(message, [.object(callObject(updated, status: status))]))
  }

  /// The terminal status goes out as `finish` (§B.12a: the only name every client ends a call
  /// on), the WebRTC leg is released and the call forgotten.
  private func end(_ call: ServerCall, status: String, info: String, sipStatus: Int? = nil) {
    var object = callObject(call, status: status)
    object["info"] = .string(String(info.prefix(1024)))
    if let sipStatus { object["sipStatus"] = .number(Double(sipStatus)) }
    send(call.owner, ServerMessages.text("finish", [.object(object)]))
    log("call \(call.callId): \(status) \(info)")
    forget(call)
  }

  private func forget(_ call: ServerCall) {
    calls.calls[call.callId] = nil
    calls.bySIPCall[call.sipCall] = nil
    if call.mediaRequested {
      actions.append(.media(.releaseMedia(mediaSessionId: call.callId, recordName: nil)))
    }
  }

  static func userPart(_ uri: String) -> String {
    var text = Substring(uri)
    if let colon = text.firstIndex(of: ":"), text.lowercased().hasPrefix("sip") {
      text = text[text.index(after: colon)...]
    }
    return String(text.prefix { $0 != "@" && $0 != ";" && $0 != ">" })
  }

  static func isHeaderToken(_ name: String) -> Bool {
    !name.isEmpty && name.count <= 64
      && name.unicodeScalars.allSatisfy {
        ($0.value >= 0x30 && $0.value <= 0x39) || ($0.value >= 0x41 && $0.value <= 0x5A)
          || ($0.value >= 0x61 && $0.value <= 0x7A) || $0 == "-" || $0 == "_" || $0 == "."
      }
  }
}
