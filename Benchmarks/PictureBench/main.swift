// Prints what snapshots and the window path cost: PNG and JPEG writing, the per-frame copy a
// played stream's LastFrameRenderer makes, and a server snapshot's decode-on-request (the held
// frames since the key frame, then the PNG). Run: swift run -c release PictureBench
import Foundation
import WCSMedia

func seconds(_ body: () throws -> Void) rethrows -> Double {
  let start = DispatchTime.now().uptimeNanoseconds
  try body()
  return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func milliseconds(_ time: Double, _ count: Int) -> String {
  String(format: "%.3f ms", 1000 * time / Double(count))
}

func frame(_ image: I420Image) -> VideoFrame {
  VideoFrame(
    width: image.width, height: image.height, dataY: Data(image.y), dataU: Data(image.u),
    dataV: Data(image.v), strideY: image.strideY, strideU: image.strideU, strideV: image.strideV,
    timestampNs: 0)
}

for (width, height) in [(640, 480), (1280, 720)] {
  let camera = VirtualCamera(width: width, height: height)
  let pictures = (0..<20).map { camera.frame($0) }
  var pngBytes = 0
  let png = try seconds {
    for picture in pictures { pngBytes += try PictureFile.png(picture).count }
  }
  var fastBytes = 0
  let fast = try seconds {
    for picture in pictures { fastBytes += try PictureFile.png(picture, fast: true).count }
  }
  var jpegBytes = 0
  let jpeg = try seconds {
    for picture in pictures { jpegBytes += try PictureFile.jpeg(picture, quality: 90).count }
  }
  print(
    "\(width)x\(height): PNG \(milliseconds(png, 20)) each (\(pngBytes / 20 / 1024) KiB), "
      + "fast PNG \(milliseconds(fast, 20)) (\(fastBytes / 20 / 1024) KiB), "
      + "JPEG q90 \(milliseconds(jpeg, 20)) each (\(jpegBytes / 20 / 1024) KiB)")

  // The keeper's copy, as a played stream pays it per frame.
  let keeper = LastFrameRenderer()
  let frames = pictures.map(frame)
  let rounds = 50
  let copy = seconds {
    for _ in 0..<rounds { for f in frames { keeper.render(f) } }
  }
  print(
    "\(width)x\(height): LastFrameRenderer copy \(milliseconds(copy, rounds * frames.count)) "
      + "per frame (\(String(format: "%.2f", 100 * 30 * copy / Double(rounds * frames.count))) % "
      + "of one core at 30 fps)")

  // Decode on request: a key frame and the frames after it, then the PNG.
  let encoder = try VP8Encoder(
    configuration: .init(width: width, height: height, bitrateKbps: 1500))
  var encoded: [[UInt8]] = []
  for index in 0..<300 {
    for out in try encoder.encode(
      camera.frame(index), timestamp: camera.rtpTimestamp(frameIndex: index))
    {
      if out.isKeyFrame { encoded = [] }
      encoded.append(out.data)
    }
  }
  for held in [1, 30, 150, encoded.count] where held <= encoded.count {
    let run = Array(encoded.prefix(held))
    let time = try seconds {
      let decoder = try VP8Decoder()
      var latest: I420Image?
      for f in run { latest = try decoder.decode(f) ?? latest }
      if let latest { _ = try PictureFile.png(latest) }
    }
    print(
      "\(width)x\(height): snapshot of \(held) held frames (decode + PNG) "
        + String(format: "%.1f ms", 1000 * time))
  }
}
