// Per-frame cost of turning webcam buffers into I420 at 1280x720: MJPEG (4:2:2, as UVC webcams
// send it, and 4:2:0) through libturbojpeg + libyuv, and YUYV through libyuv; plus an X11 grab of
// the screen at $DISPLAY when one is set. Budget at 30 fps: 33 ms per frame, all stages together.
// Reports thread CPU time (best of 5 runs): on a shared machine the fairer figure.
import BenchSupport
import CMediaDevices
import Foundation
import WCSMedia

func cpuSeconds() -> Double { clockSeconds(CLOCK_THREAD_CPUTIME_ID) }

/// Best-of-5 milliseconds per call of `body` over `count` calls.
func measure(_ name: String, count: Int, _ body: () throws -> Void) rethrows {
  var best = Double.infinity
  for _ in 0..<5 {
    let start = cpuSeconds()
    for _ in 0..<count { try body() }
    best = min(best, (cpuSeconds() - start) / Double(count))
  }
  let label = name.padding(toLength: 52, withPad: " ", startingAt: 0)
  print(label + String(format: "%8.3f ms/frame (CPU)", best * 1000))
}

func jpeg(_ image: I420Image, _ subsampling: TJSAMP) -> [UInt8] {
  guard let bgra = image.argb(), let handle = tjInitCompress() else { return [] }
  defer { tjDestroy(handle) }
  var output: UnsafeMutablePointer<UInt8>?
  var size: UInt = 0
  let result = bgra.withUnsafeBufferPointer {
    tjCompress2(
      handle, $0.baseAddress, Int32(image.width), Int32(4 * image.width), Int32(image.height),
      Int32(TJPF_BGRA.rawValue), &output, &size, Int32(subsampling.rawValue), 85, 0)
  }
  guard result == 0, let output else { return [] }
  defer { tjFree(output) }
  return [UInt8](UnsafeBufferPointer(start: output, count: Int(size)))
}

let width = 1280
let height = 720
let picture = VirtualCamera(width: width, height: height).frame(3)
let decoder = try MJPEGDecoder()
for (name, sampling) in [
  ("MJPEG 4:2:2 1280x720 -> I420", TJSAMP_422), ("MJPEG 4:2:0 1280x720 -> I420", TJSAMP_420),
] {
  let bytes = jpeg(picture, sampling)
  try measure(name, count: 20) { _ = try decoder.decode(bytes) }
}
var yuyv = [UInt8](repeating: 0, count: 2 * width * height)
for i in stride(from: 0, to: yuyv.count, by: 4) {
  yuyv[i] = UInt8(truncatingIfNeeded: i)
  yuyv[i + 1] = 100
  yuyv[i + 2] = UInt8(truncatingIfNeeded: i + 7)
  yuyv[i + 3] = 150
}
measure("YUYV 1280x720 -> I420", count: 50) {
  _ = I420Image.fromYUY2(yuyv, width: width, height: height)
}
if ProcessInfo.processInfo.environment["DISPLAY"] != nil {
  let capturer = try X11ScreenCapturer()
  try measure(
    "X11 grab \(capturer.width)x\(capturer.height) (shm: \(capturer.usesSharedMemory)) -> I420",
    count: 20
  ) { _ = try capturer.captureFrame() }
} else {
  print("X11 grab: skipped (no DISPLAY)")
}
