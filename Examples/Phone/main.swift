// Phone (iOS: WCSExample/PhoneMin): a SIP phone on the server's WebRTC–SIP gateway. Connects
// with the SIP account (optionally REGISTERing it), then calls --callee or waits for an incoming
// call and answers it; sends --dtmf digits and the digits typed on standard input, puts the call
// on hold and back with --hold, plays the far end's audio on the sound output or writes it to
// --audio-out, hangs up after --duration and prints the statuses as the iOS example does, then a
// summary.
import ExampleSupport
import FPWCSApi2Swift
import Foundation

let usage = """
  usage: Phone [options]

    --login USER         SIP login (default 1001); also the authentication name
    --auth-name NAME     SIP authentication name (default: the login)
    --password PASS      SIP password
    --domain HOST        SIP domain (default 127.0.0.1)
    --proxy HOST         SIP outbound proxy (default: the domain)
    --port N             SIP port of the proxy (default 5060)
    --register           REGISTER the account (session status REGISTERED)
    --callee URI         call this user, number or sip: URI; without it, wait for a call and
                         answer it
    --dtmf DIGITS        send DTMF digits once the call is up
    --dtmf-type TYPE     how DTMF goes out: rfc4733 (default, RTP telephone-events) or info
                         (SIP INFO)
    --audio-out FILE     write the far end's audio to this WAV file (48 kHz) instead of
                         playing it on the default sound output (PulseAudio, else ALSA; silent
                         when there is none)
    --hold               put the call on hold for a second, then take it back
    --duration S         seconds to stay in the call (default 3)
    --timeout S          seconds to wait for ESTABLISHED or an incoming call (default 20)

  While the call is up, standard input is read (key by key on a terminal, else line by line):
  0-9 * # A-D send DTMF, o holds, u takes the call back, h hangs up.
  \(ExampleServer.usage)
  """

func runPhone(_ argv: [String]) -> Int32 {
  let log = ExampleLog()
  if argv.contains("--help") {
    log.plain(usage)
    return 0
  }
  let arguments: ExampleArguments
  let duration: Double
  let timeout: Double
  let port: Int
  let dtmfType: kFPWCSCallDTMF
  do {
    arguments = try ExampleArguments(
      argv, booleanFlags: ["register", "hold", "server-log"], usage: usage)
    try ExampleNetwork.install(arguments, log: log)
    duration = try arguments.double("duration", default: 3)
    timeout = try arguments.double("timeout", default: 20)
    port = try arguments.int("port", default: 5060)
    switch arguments.string("dtmf-type", default: "rfc4733") {
    case "rfc4733", "rfc2833": dtmfType = .fpwcsCallDTMFRFC2833
    case "info": dtmfType = .fpwcsCallDTMFInfo
    case let other:
      throw ExampleError.usage("--dtmf-type wants rfc4733 or info, got \(other ?? "")")
    }
  } catch {
    log.plain("\(error)\n\n\(usage)")
    return 64
  }
  let login = arguments.string("login", default: "1001") ?? "1001"
  let callee = arguments.string("callee")
  let dtmf = arguments.string("dtmf")
  var summary = ExampleSummary()
  let server: ExampleServer
  do {
    server = try ExampleServer(arguments: arguments, log: log)
  } catch {
    log.plain("Phone: \(error)")
    return 1
  }
  defer { server.stop() }
  let audioOut = arguments.string("audio-out")
  let recorder = audioOut.map { PlayedAudioRecorder(path: $0, log: log) }
  if let recorder, !recorder.install() {
    log.plain("Phone: --audio-out needs the native media engine")
    return 1
  }

  let options = FPWCSApi2SessionOptions()
  options.urlServer = server.url
  options.appKey = "defaultApp"
  options.sipLogin = login
  options.sipAuthenticationName = arguments.string("auth-name", default: login)
  options.sipPassword = arguments.string("password", default: "")
  options.sipDomain = arguments.string("domain", default: "127.0.0.1")
  options.sipOutboundProxy = arguments.string("proxy") ?? options.sipDomain
  options.sipPort = port
  options.sipRegisterRequired = arguments.flag("register")
  let session: FPWCSApi2Session
  do {
    session = try FPWCSApi2.createSession(options)
  } catch {
    log.line("Failed to connect: \(error)")
    return 1
  }
  let current = ExampleCallHolder()
  let watch: (FPWCSApi2Call) -> Void = { call in
    current.call = call
    for status in kFPWCSCallStatus.allCases { call.on(status) { log.call($0, event: status) } }
    call.onDTMF { _, digits, type in
      log.line("DTMF received: \(digits) (\(type == .fpwcsCallDTMFInfo ? "SIP INFO" : "RFC 4733"))")
    }
  }
  session.onIncomingCallCallback { call in
    guard let call else { return }
    log.line("incoming call from \(call.getCaller()) (\(call.getVisibleName() ?? ""))")
    watch(call)
    do { try call.answer() } catch { log.line("answer FAILED: \(error)") }
  }
  let placeCall: (FPWCSApi2Session?) -> Void = { rSession in
    guard let callee else {
      log.line("waiting for a call to \(login)")
      return
    }
    let callOptions = FPWCSApi2CallOptions()
    callOptions.callee = callee
    let constraints = FPWCSApi2MediaConstraints()
    let audio = FPWCSApi2AudioConstraints()
    audio.deviceID = "virtual:microphone"
    constraints.audio = audio
    callOptions.localConstraints = constraints
    do {
      guard let call = try rSession?.createCall(callOptions) else { return }
      watch(call)
      try call.call()
    } catch {
      log.line("call FAILED: \(error)")
      log.mark("call FAILED", detail: "call FAILED: \(error)")
    }
  }
  session.on(.fpwcsSessionStatusEstablished) { rSession in
    log.session(rSession)
    if !arguments.flag("register") { placeCall(rSession) }
  }
  session.on(.fpwcsSessionStatusRegistered) { rSession in
    log.session(rSession)
    placeCall(rSession)
  }
  session.on(.fpwcsSessionStatusDisconnected) { log.session($0) }
  session.on(.fpwcsSessionStatusFailed) { log.session($0) }
  session.connect()

  let endEvents = [
    "call FAILED", "call BUSY", "call FINISH", "session FAILED", "session DISCONNECTED",
  ]
  if log.wait(for: "call ESTABLISHED", unless: endEvents, timeout: timeout, in: &summary),
    let call = current.call
  {
    if audioOut == nil {
      // Opened once established, so a missing sound system is reported and the call goes on.
      do {
        try call.setLoudspeakerStatus(true)
        log.line("audio on the default sound output")
      } catch {
        log.line("sound output unavailable: \(error)")
      }
    }
    if let dtmf {
      do {
        try call.sendDTMF(dtmf, type: dtmfType)
        log.line("sent DTMF \(dtmf)")
      } catch {
        summary.fail("DTMF: \(error)")
      }
    }
    if arguments.flag("hold") {
      do {
        try call.hold()
        _ = log.wait(for: ["call HOLD"], timeout: 5)
        Thread.sleep(forTimeInterval: 1)
        try call.unhold()
      } catch {
        summary.fail("hold: \(error)")
      }
    }
    let keys = PhoneKeys(call: call, dtmfType: dtmfType, log: log)
    let terminal = keys.start()
    defer { terminal?.stop() }
    let start = log.elapsed
    while log.elapsed < start + duration, log.time(of: "hangup key") == nil,
      !log.failIfEnded(endEvents, in: &summary)
    {
      Thread.sleep(forTimeInterval: 0.05)
    }
    call.hangup()
    if log.wait(for: ["call FINISH", "call FAILED"], timeout: 10) == nil {
      summary.fail("no FINISH after hangup")
    }
  }
  session.disconnect()
  _ = log.wait(for: ["session DISCONNECTED", "session FAILED"], timeout: 5)
  if let recorder {
    switch recorder.finish() {
    case .success(let path): summary.add("Audio file", path ?? "nothing received")
    case .failure(let error): summary.fail("\(error)")
    }
  }

  summary.add("Login", login)
  summary.add("Registered", log.time(of: "session REGISTERED") == nil ? "no" : "yes")
  summary.add("Direction", callee == nil ? "incoming" : "outgoing")
  summary.add(
    "Other party", current.call.map { callee == nil ? $0.getCaller() : $0.getCallee() } ?? "-")
  summary.addTime("Time to ESTABLISHED", log.time(of: "call ESTABLISHED"))
  summary.add("Held", log.time(of: "call HOLD") == nil ? "no" : "yes")
  summary.add(
    "Final status",
    current.call.map { FPWCSApi2Model.callStatus(toString: $0.getStatus()) } ?? "no call")
  summary.add("Reason", current.call?.getInfo() ?? "-")
  if summary.succeeded, log.time(of: "call FINISH") == nil { summary.fail("no FINISH") }
  return summary.print(to: log)
}

/// The call's keys from standard input: raw key presses on a terminal (`KeyReader`), else lines
/// (a pipe), each character handled in turn; digits in a row go out as one `sendDTMF`.
final class PhoneKeys: Sendable {
  static let dtmfDigits = Set("0123456789*#ABCDabcd")

  let call: FPWCSApi2Call
  let dtmfType: kFPWCSCallDTMF
  let log: ExampleLog

  init(call: FPWCSApi2Call, dtmfType: kFPWCSCallDTMF, log: ExampleLog) {
    self.call = call
    self.dtmfType = dtmfType
    self.log = log
  }

  /// Starts reading. Reading only begins once the call is up, so lines piped in earlier wait
  /// in the pipe instead of failing against a call that cannot take DTMF yet.
  /// Returns the terminal's reader, to `stop()` when the call ends.
  func start() -> KeyReader? {
    if let reader = KeyReader.start({ [self] key in handle(String(key)) }) {
      log.line("keys: 0-9 * # A-D = DTMF, o = hold, u = unhold, h = hang up")
      return reader
    }
    Thread.detachNewThread { [self] in
      while let line = readLine() { handle(line) }
    }
    return nil
  }

  /// Handles one line or key press.
  func handle(_ text: String) {
    var digits = ""
    for character in text + "\n" {
      if Self.dtmfDigits.contains(character) {
        digits.append(character.uppercased())
        continue
      }
      if !digits.isEmpty {
        send(digits)
        digits = ""
      }
      switch character {
      case "h":
        log.line("hanging up (key h)")
        log.mark("hangup key")
      case "o": run("hold") { try self.call.hold() }
      case "u": run("unhold") { try self.call.unhold() }
      case " ", "\t", "\n", "\r": break
      default: log.line("key \(character) does nothing (0-9 * # A-D, o, u, h)")
      }
    }
  }

  private func send(_ digits: String) {
    run("DTMF \(digits)") {
      try call.sendDTMF(digits, type: dtmfType)
      log.line("sent DTMF \(digits) (\(dtmfType == .fpwcsCallDTMFInfo ? "SIP INFO" : "RFC 4733"))")
    }
  }

  private func run(_ what: String, _ action: () throws -> Void) {
    do {
      try action()
    } catch {
      log.line("\(what) FAILED: \(error)")
    }
  }
}

exit(runPhone(Array(CommandLine.arguments.dropFirst())))
