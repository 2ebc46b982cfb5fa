import Foundation
import WCSTransport
import XCTest

/// An aiortc peer (Python, loopback only) driven over JSON lines: it prints its SDP offer,
/// takes the answer, and as a player reports decoded frames. The script is written to a
/// temporary file so the test target has no non-Swift files.
final class AiortcClient: @unchecked Sendable {
  // @unchecked Sendable: `process` and `input` are set in init and only used by the test
  // thread afterwards; `lines` is thread-safe.
  private let process = Process()
  private let input = Pipe()
  let lines = Collector<JSONValue>()

  /// `true` when `python3` can import aiortc.
  static var isAvailable: Bool {
    let check = Process()
    check.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    check.arguments = ["python3", "-c", "import aiortc"]
    check.standardOutput = FileHandle.nullDevice
    check.standardError = FileHandle.nullDevice
    guard (try? check.run()) != nil else { return false }
    check.waitUntilExit()
    return check.terminationStatus == 0
  }

  /// Starts the script as `publisher` (sends aiortc's test audio and video) or `player`.
  init(role: String, directory: URL) throws {
    let script = directory.appendingPathComponent("wcs_aiortc_peer.py")
    if !FileManager.default.fileExists(atPath: script.path) {
      try Self.script.write(to: script, atomically: true, encoding: .utf8)
    }
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", script.path, role]
    let output = Pipe()
    process.standardOutput = output
    process.standardInput = input
    process.standardError = FileHandle.nullDevice
    let buffer = LineBuffer()
    output.fileHandleForReading.readabilityHandler = { [lines] handle in
      for line in buffer.append(handle.availableData) {
        if let value = try? JSONDecoder().decode(JSONValue.self, from: Data(line.utf8)) {
          lines.append(value)
        }
      }
    }
    try process.run()
  }

  /// Waits for the offer the script prints first.
  func offer(file: StaticString = #filePath, line: UInt = #line) -> String? {
    lines.wait(timeout: 30, file: file, line: line) { $0.contains { $0["offer"] != nil } }
      .compactMap { $0["offer"]?.stringValue }.first
  }

  func send(_ value: JSONValue) {
    input.fileHandleForWriting.write(Data((WCSMessageCodec.encode(value) + "\n").utf8))
  }

  func stop() {
    send(["cmd": "close"])
    let deadline = Date().addingTimeInterval(5)
    while process.isRunning, Date() < deadline { usleep(20_000) }
    if process.isRunning { process.terminate() }
  }

  static let script = #"""
    import asyncio, json, sys
    import aioice.ice
    from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
    from aiortc.mediastreams import AudioStreamTrack, VideoStreamTrack

    # aioice skips loopback addresses; the test runs on 127.0.0.1 only.
    aioice.ice.get_host_addresses = lambda *a, **k: ["127.0.0.1"]

    def emit(obj):
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    async def read_command(timeout):
        loop = asyncio.get_running_loop()
        line = await asyncio.wait_for(loop.run_in_executor(None, sys.stdin.readline), timeout)
        if not line:
            raise SystemExit("stdin closed")
        return json.loads(line)

    async def main():
        role = sys.argv[1]
        pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        counts = {"video": 0, "audio": 0, "width": 0, "height": 0}
        reported = asyncio.Event()

        @pc.on("connectionstatechange")
        async def on_state():
            emit({"event": "state", "state": pc.connectionState})

        async def consume(track):
            while True:
                try:
                    frame = await track.recv()
                except Exception:
                    return
                counts[track.kind] += 1
                if track.kind == "video":
                    counts["width"], counts["height"] = frame.width, frame.height
                if counts["video"] >= 10 and counts["audio"] >= 10 and not reported.is_set():
                    reported.set()
                    emit(dict(event="frames", **counts))

        if role == "publisher":
            pc.addTrack(AudioStreamTrack())
            pc.addTrack(VideoStreamTrack())
        else:
            pc.addTransceiver("audio", direction="recvonly")
            pc.addTransceiver("video", direction="recvonly")

            @pc.on("track")
            def on_track(track):
                asyncio.ensure_future(consume(track))

        await pc.setLocalDescription(await pc.createOffer())
        emit({"offer": pc.localDescription.sdp})
        answer = await read_command(30)
        await pc.setRemoteDescription(RTCSessionDescription(sdp=answer["answer"], type="answer"))
        while True:
            command = await read_command(120)
            if command.get("cmd") == "close":
                break
        await pc.close()

    try:
        asyncio.run(main())
    except (SystemExit, asyncio.TimeoutError) as exc:
        print(f"wcs_aiortc_peer: {exc!r}", file=sys.stderr)
    """#
}

/// Splits bytes from a pipe into lines (a read may end mid-line).
final class LineBuffer: @unchecked Sendable {
  // @unchecked Sendable: only the pipe's readability handler (one at a time) calls `append`.
  private var pending = Data()

  func append(_ data: Data) -> [String] {
    pending.append(data)
    var lines: [String] = []
    while let newline = pending.firstIndex(of: 0x0A) {
      lines.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
      pending.removeSubrange(pending.startIndex...newline)
    }
    return lines
  }
}
