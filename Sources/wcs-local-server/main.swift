// wcs-local-server: a WCS-compatible server for examples and tests. See `--help`.
import Dispatch
import Foundation
import WCSLocalServer

#if canImport(Glibc)
  import Glibc
#endif

private func fail(_ message: String, code: Int32) -> Never {
  FileHandle.standardError.write(Data("wcs-local-server: \(message)\n".utf8))
  exit(code)
}

let parsed: LocalServerCommandLine.Parsed
do {
  parsed = try LocalServerCommandLine.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
  fail("\(error)\n\n\(LocalServerCommandLine.usage)", code: 64)
}

switch parsed {
case .help:
  FileHandle.standardOutput.write(Data((LocalServerCommandLine.usage + "\n").utf8))
case .run(let configuration):
  let server: WCSLocalServer
  do {
    server = try WCSLocalServer.start(configuration)
  } catch {
    fail("\(error)", code: 1)
  }
  // The URL lines on standard output let scripts and tests find the ports (0 = any free port).
  var lines = ["ws: \(server.wsURL)"]
  if let wss = server.wssURL { lines.append("wss: \(wss)") }
  lines.append("records: \(server.httpBaseURL)/client/records/")
  if let legacy = server.legacyHTTPBaseURL { lines.append("records: \(legacy)/client/records/") }
  // Unbuffered, so a parent reading the pipe sees the URLs at once.
  FileHandle.standardOutput.write(Data(lines.map { $0 + "\n" }.joined().utf8))

  // Signals arrive as dispatch events, so stop() runs as ordinary code (not in a handler).
  var sources: [any DispatchSourceSignal] = []
  for signalNumber in [SIGINT, SIGTERM] {
    signal(signalNumber, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
    source.setEventHandler {
      FileHandle.standardError.write(
        Data("wcs-local-server: signal \(signalNumber), stopping\n".utf8))
      server.stop()
      exit(0)
    }
    source.resume()
    sources.append(source)
  }
  withExtendedLifetime(sources) { dispatchMain() }
}
