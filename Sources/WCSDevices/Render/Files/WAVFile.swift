import Foundation
import WCSCodecs

/// Writes 16-bit PCM audio to a WAV (RIFF/WAVE) file: a 44-byte header (`RIFF`, `WAVE`, a 16-byte
/// `fmt ` chunk with format 1, a `data` chunk) and little-endian interleaved samples. The RIFF and
/// data sizes are patched on `close()`.
public final class WAVWriter {
  /// Sample rate in Hz written in the header.
  public let sampleRate: Int
  /// Interleaved channels.
  public let channels: Int
  /// Samples per channel written so far.
  public private(set) var samplesPerChannel = 0
  private let sink: MediaFileSink
  private var dataBytes: UInt64 = 0

  /// Creates (or truncates) `url` and writes a header with zero sizes.
  /// - Parameters:
  ///   - url: the file to create (truncated when it exists).
  ///   - sampleRate: Hz (default 48 000, the `PCMAudioFrame` rate).
  ///   - channels: 1 or 2.
  /// - Throws: `MediaFileError.mismatch` for other channel counts or a non-positive rate, `.io`.
  public init(url: URL, sampleRate: Int = PCMAudioFrame.sampleRate, channels: Int = 1)
    throws(MediaFileError)
  {
    guard channels == 1 || channels == 2, sampleRate > 0, sampleRate <= 384_000 else {
      throw .mismatch("channels \(channels), rate \(sampleRate)")
    }
    self.sampleRate = sampleRate
    self.channels = channels
    sink = try MediaFileSink(url: url)
    let blockAlign = UInt16(channels * 2)
    var header = Array("RIFF".utf8) + MediaFileLittleEndian.bytes(UInt32(36)) + Array("WAVE".utf8)
    header += Array("fmt ".utf8) + MediaFileLittleEndian.bytes(UInt32(16))
    header += MediaFileLittleEndian.bytes(UInt16(1)) + MediaFileLittleEndian.bytes(UInt16(channels))
    header += MediaFileLittleEndian.bytes(UInt32(sampleRate))
    header += MediaFileLittleEndian.bytes(UInt32(sampleRate) * UInt32(blockAlign))
    header += MediaFileLittleEndian.bytes(blockAlign) + MediaFileLittleEndian.bytes(UInt16(16))
    header += Array("data".utf8) + MediaFileLittleEndian.bytes(UInt32(0))
    try sink.append(header)
  }

  /// Appends a frame's samples.
  /// - Throws: `MediaFileError.mismatch` for another channel count, `.closed`, `.io`.
  public func write(_ frame: PCMAudioFrame) throws(MediaFileError) {
    guard frame.channels == channels else {
      throw .mismatch("frame has \(frame.channels) channels, file \(channels)")
    }
    try write(samples: frame.samples)
  }

  /// Appends interleaved samples (a multiple of `channels`).
  /// - Throws: `MediaFileError.mismatch` when the count is not a multiple of `channels`, `.closed`,
  ///   `.io`.
  public func write(samples: [Int16]) throws(MediaFileError) {
    guard samples.count % channels == 0 else { throw .mismatch("partial sample group") }
    // One pass into one buffer (a small array per sample cost more than the write itself;
    // playout sinks call this on the event loop every 20 ms).
    let bytes = [UInt8](unsafeUninitializedCapacity: samples.count * 2) { buffer, count in
      for (index, sample) in samples.enumerated() {
        let value = UInt16(bitPattern: sample)
        buffer[2 * index] = UInt8(truncatingIfNeeded: value)
        buffer[2 * index + 1] = UInt8(truncatingIfNeeded: value >> 8)
      }
      count = samples.count * 2
    }
    try sink.append(bytes)
    dataBytes += UInt64(bytes.count)
    samplesPerChannel += samples.count / channels
  }

  /// Writes the RIFF and data chunk sizes and closes the file.
  /// - Throws: `MediaFileError.io`, `.mismatch` when the data outgrew the 4 GiB RIFF limit.
  public func close() throws(MediaFileError) {
    guard !sink.isClosed else { return }
    guard dataBytes <= UInt64(UInt32.max - 36) else { throw .mismatch("over 4 GiB") }
    try sink.patch(MediaFileLittleEndian.bytes(UInt32(36 + dataBytes)), at: 4)
    try sink.patch(MediaFileLittleEndian.bytes(UInt32(dataBytes)), at: 40)
    try sink.close()
  }
}

/// A WAV file read whole and checked strictly: PCM format 1 (or WAVE_FORMAT_EXTENSIBLE with PCM),
/// 16 bits per sample, chunks within bounds.
public struct WAVFile: Sendable {
  /// Sample rate in Hz.
  public let sampleRate: Int
  /// Interleaved channels.
  public let channels: Int
  /// Interleaved samples.
  public let samples: [Int16]

  /// Samples per channel.
  public var samplesPerChannel: Int { samples.count / max(channels, 1) }

  /// Reads and parses `url`.
  /// - Throws: `MediaFileError` (`.io`, `.malformed`, `.unsupported`).
  public init(url: URL) throws(MediaFileError) {
    try self.init(bytes: readMediaFile(url))
  }

  /// Parses a whole WAV stream.
  /// - Throws: `MediaFileError.malformed` for bad signatures or chunks past the end, `.unsupported`
  ///   for compressed formats or sample sizes other than 16 bits.
  public init(bytes: [UInt8]) throws(MediaFileError) {
    var reader = MediaFileByteReader(bytes)
    guard let riff = reader.take(4), Array(riff) == Array("RIFF".utf8), reader.uint32() != nil,
      let wave = reader.take(4), Array(wave) == Array("WAVE".utf8)
    else { throw .malformed("missing RIFF/WAVE header") }
    var format: (channels: Int, rate: Int)?
    var data: ArraySlice<UInt8>?
    while reader.remaining >= 8, data == nil || format == nil {
      guard let id = reader.take(4), let size = reader.uint32() else { break }
      guard let body = reader.take(Int(size)) else {
        throw .malformed("chunk \(String(decoding: id, as: UTF8.self)) runs past the end")
      }
      if size % 2 == 1 { _ = reader.take(1) }  // RIFF pads chunks to even sizes.
      switch String(decoding: id, as: UTF8.self) {
      case "fmt ":
        var fmt = MediaFileByteReader(Array(body))
        guard let tag = fmt.uint16(), let channels = fmt.uint16(), let rate = fmt.uint32(),
          fmt.uint32() != nil, fmt.uint16() != nil, let bits = fmt.uint16()
        else { throw .malformed("fmt chunk shorter than 16 bytes") }
        guard tag == 1 || tag == 0xFFFE else { throw .unsupported("format tag \(tag)") }
        guard bits == 16 else { throw .unsupported("\(bits) bits per sample") }
        guard channels >= 1, rate > 0 else { throw .malformed("channels \(channels) rate \(rate)") }
        format = (Int(channels), Int(rate))
      case "data":
        data = body
      default:
        continue
      }
    }
    guard let format else { throw .malformed("no fmt chunk") }
    guard let data else { throw .malformed("no data chunk") }
    guard data.count % (2 * format.channels) == 0 else { throw .malformed("partial sample") }
    var samples = [Int16]()
    samples.reserveCapacity(data.count / 2)
    var index = data.startIndex
    while index + 1 < data.endIndex {
      samples.append(Int16(bitPattern: UInt16(data[index]) | UInt16(data[index + 1]) << 8))
      index += 2
    }
    sampleRate = format.rate
    channels = format.channels
    self.samples = samples
  }
}
