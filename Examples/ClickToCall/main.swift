// ClickToCall (iOS: WCSExample/ClickToCall): one SIP call to a fixed callee through the server's
// WebRTC–SIP gateway, its statuses printed as the iOS example shows them, optional DTMF, then
// hang up and print a summary. Exit status 0 only when the call was ESTABLISHED and ended with
// FINISH.
import ExampleSupport
import FPWCSApi2Swift
import Foundation

let usage = """
  usage: ClickToCall --callee URI [options]

    --callee URI         who to call: a SIP URI (sip:user@host:port) or a number the server's
                         SIP account dials
    --app-key KEY        server application (default clickToCallApp, as the iOS example)
    --dtmf DIGITS        send these DTMF digits (RFC 4733) once the call is up
    --duration S         seconds to stay in the call (default 3)
    --timeout S          seconds to wait for ESTABLISHED (default 20)
  \(ExampleServer.usage)
  """

func runClickToCall(_ argv: [String]) -> Int32 {
  let log = ExampleLog()
  if argv.contains("--help") {
    log.plain(usage)
    return 0
  }
  let arguments: ExampleArguments
  let duration: Double
  let timeout: Double
  let callee: String
  do {
    arguments = try ExampleArguments(argv, booleanFlags: ["server-log"], usage: usage)
    try ExampleNetwork.install(arguments, log: log)
    duration = try arguments.double("duration", default: 3)
    timeout = try arguments.double("timeout", default: 20)
    guard let value = arguments.string("callee"), !value.isEmpty else {
      throw ExampleError.usage("--callee is required")
    }
    callee = value
  } catch {
    log.plain("\(error)\n\n\(usage)")
    return 64
  }
  let dtmf = arguments.string("dtmf")
  var summary = ExampleSummary()
  let server: ExampleServer
  do {
    server = try ExampleServer(arguments: arguments, log: log)
  } catch {
    log.plain("ClickToCall: \(error)")
    return 1
  }
  defer { server.stop() }

  let options = FPWCSApi2SessionOptions()
  options.urlServer = server.url
  options.appKey = arguments.string("app-key", default: "clickToCallApp")
  let session: FPWCSApi2Session
  do {
    session = try FPWCSApi2.createSession(options)
  } catch {
    log.line("Failed to connect: \(error)")
    return 1
  }
  let current = ExampleCallHolder()
  session.on(.fpwcsSessionStatusEstablished) { rSession in
    log.session(rSession)
    let callOptions = FPWCSApi2CallOptions()
    callOptions.callee = callee
    let constraints = FPWCSApi2MediaConstraints()
    let audio = FPWCSApi2AudioConstraints()
    audio.deviceID = "virtual:microphone"
    constraints.audio = audio
    callOptions.localConstraints = constraints
    do {
      guard let call = try rSession?.createCall(callOptions) else { return }
      current.call = call
      for status in kFPWCSCallStatus.allCases {
        call.on(status) { log.call($0, event: status) }
      }
      try call.call()
    } catch {
      log.line("call FAILED: \(error)")
      log.mark("call FAILED", detail: "call FAILED: \(error)")
    }
  }
  session.on(.fpwcsSessionStatusDisconnected) { log.session($0) }
  session.on(.fpwcsSessionStatusFailed) { log.session($0) }
  session.connect()

  let endEvents = [
    "call FAILED", "call BUSY", "call FINISH", "session FAILED", "session DISCONNECTED",
  ]
  if log.wait(for: "call ESTABLISHED", unless: endEvents, timeout: timeout, in: &summary) {
    if let dtmf, let call = current.call {
      do {
        try call.sendDTMF(dtmf, type: .fpwcsCallDTMFRFC2833)
        log.line("sent DTMF \(dtmf)")
      } catch {
        summary.fail("DTMF: \(error)")
      }
    }
    let start = log.elapsed
    while log.elapsed < start + duration, !log.failIfEnded(endEvents, in: &summary) {
      Thread.sleep(forTimeInterval: 0.05)
    }
    current.call?.hangup()
    if log.wait(for: ["call FINISH", "call FAILED"], timeout: 10) == nil {
      summary.fail("no FINISH after hangup")
    }
  }
  session.disconnect()
  _ = log.wait(for: ["session DISCONNECTED", "session FAILED"], timeout: 5)

  summary.add("Callee", callee)
  summary.addTime("Time to ESTABLISHED", log.time(of: "call ESTABLISHED"))
  summary.add("SIP status", "\(current.call?.getSipStatus() ?? 0)")
  summary.add(
    "Final status",
    current.call.map { FPWCSApi2Model.callStatus(toString: $0.getStatus()) } ?? "no call")
  summary.add("Reason", current.call?.getInfo() ?? "-")
  summary.add("DTMF sent", dtmf ?? "-")
  if summary.succeeded, log.time(of: "call FINISH") == nil { summary.fail("no FINISH") }
  return summary.print(to: log)
}

exit(runClickToCall(Array(CommandLine.arguments.dropFirst())))
