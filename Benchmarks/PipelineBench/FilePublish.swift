import BenchSupport
import Foundation
import WCSMedia

/// `PipelineBench file-publish [seconds]`: the publish path's CPU for an H.264 file,
/// 1280x720 at 30 fps, constrained baseline at 2 Mbit/s (ffmpeg's `testsrc2` through
/// libx264), video only, to the `peer-sink` child:
///  - pass-through: the file's access units sent as they are (`H264FilePassThrough`);
///  - transcode: the same file decoded by FFmpeg and encoded by OpenH264 at the same size and
///    rate, which a `maxBitrate` under the file's forces (the rule's bitrate check), so both
///    send H.264 of the same pictures.
func runFilePublish(duration span: Double) throws -> Never {
  let directory = FileManager.default.temporaryDirectory
    .appendingPathComponent("pipelinebench-file-\(getpid())")
  try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: directory) }
  let path = directory.appendingPathComponent("testsrc2-720p30.mp4").path
  let ffmpeg = Process()
  ffmpeg.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
  ffmpeg.arguments = [
    "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
    "testsrc2=size=1280x720:rate=30", "-t", "10", "-c:v", "libx264", "-profile:v", "baseline",
    "-preset", "veryfast", "-b:v", "2M", "-g", "60", "-pix_fmt", "yuv420p", path,
  ]
  try ffmpeg.run()
  ffmpeg.waitUntilExit()
  guard ffmpeg.terminationStatus == 0 else {
    throw PipelineBenchError.peer("ffmpeg exited \(ffmpeg.terminationStatus)")
  }
  func request(maxBitrate: Int) -> MediaConnectionRequest {
    var request = MediaConnectionRequest(
      direction: .publish, audio: nil,
      video: .init(
        deviceID: "file:\(path)", minWidth: 1280, maxWidth: 1280, minHeight: 720,
        maxHeight: 720, maxFrameRate: 30, maxBitrate: maxBitrate),
      excludedCodecs: ["VP8"])
    request.preferredVideoCodec = "H264"
    return request
  }
  for (label, maxBitrate) in [("pass-through", 0), ("transcode", 1500)] {
    let run = try measurePublish(
      announce: "file-publish \(label)", request: request(maxBitrate: maxBitrate))
    let perSecond = run.cpu / span
    print(
      "file-publish \(label): 1280x720@30 H.264, \(run.frames) pictures in \(Int(span)) s, \(seconds(run.cpu)) CPU (\(percent(perSecond)) of a core), \(milliseconds(run.cpu / Double(max(1, run.frames)))) per picture, \(seconds(run.codecCPU)) in the encoder"
    )
  }
  exit(0)
}
