// Mouth-to-ear delay the gateway's bridge core adds, measured by tone onset (`--onsets`).
//
// One trial: silence, then a 440 Hz tone starting at a random sample of packet 15, sent as
// 20 ms packets arriving every 20 ms of virtual time through a fresh `CallMediaBridge`. Each
// packet the bridge emits is stamped with its input's arrival time plus the thread CPU time
// the bridge took (not wall time: on a loaded machine a preempted thread would measure the
// scheduler), and played from then on (after the previous one, as a receiver plays). The
// onset is the first 2 ms window whose RMS reaches half the tone's, found on the decoded input
// (played as it arrives, what a direct wire would give) and on the decoded output; the delay
// is the difference. Decoding the input with the same kind of decoder cancels the sender's
// own codec delay, so what is left is the gateway's: its decode, resampling, regrouping,
// encode and processing time.
import BenchSupport
import Foundation
import TestSupport
import WCSCodecs
import WCSLocalServer
import WCSProtocols

/// Where the tone goes.
enum OnsetDirection: CustomStringConvertible {
  case webRTCToSIP
  case sipToWebRTC

  var description: String { self == .webRTCToSIP ? "WebRTC -> SIP" : "SIP -> WebRTC" }
}

/// The tone's amplitude (16-bit) and frequency (Hz).
private let toneAmplitude = 8000.0
private let toneFrequency = 440.0
/// Packets per trial, and the one the tone starts in.
private let packetsPerTrial = 40
private let onsetPacket = 15

/// The first sample where a 2 ms window's RMS reaches half the tone's, or nil.
func onsetSample(_ samples: [Int16], rate: Int) -> Int? {
  let window = rate / 500
  guard samples.count >= window else { return nil }
  let threshold =
    Double(window) * (0.5 * toneAmplitude / 2.squareRoot()) * (0.5 * toneAmplitude / 2.squareRoot())
  var energy = 0.0
  for index in 0..<samples.count {
    energy += Double(samples[index]) * Double(samples[index])
    if index >= window {
      energy -= Double(samples[index - window]) * Double(samples[index - window])
    }
    if index >= window - 1, energy >= threshold { return index - window + 1 }
  }
  return nil
}

/// Decodes one RTP packet of `codec` to linear PCM at its own rate (48 kHz Opus, 8 kHz G.711).
private func decodePayload(_ bytes: [UInt8], opus: OpusDecoder?) throws -> [Int16] {
  let packet = try RTPPacket.parse(bytes)
  if let opus { return try opus.decode(packet.payload).samples }
  return G711.decode(packet.payload, law: .muLaw)
}

/// Gateway-added delays (ms) of `trials` tone onsets through the bridge.
func onsetDelays(
  codec: CallMediaBridge.SIPCodec, direction: OnsetDirection, trials: Int
) throws -> [Double] {
  var generator = SystemRandomNumberGenerator()
  var delays: [Double] = []
  let sipIsOpus: Bool
  if case .opus = codec { sipIsOpus = true } else { sipIsOpus = false }
  let inputIsOpus = direction == .webRTCToSIP || sipIsOpus
  let outputIsOpus = direction == .sipToWebRTC || sipIsOpus
  let inputRate = inputIsOpus ? 48_000 : 8000
  let outputRate = outputIsOpus ? 48_000 : 8000
  for _ in 0..<trials {
    var bridge = try CallMediaBridge(webRTCPayloadType: 111, webRTCSSRC: 1, sipSSRC: 2)
    bridge.setSIPCodec(codec)
    let onset = onsetPacket * 960 + Int.random(in: 0..<960, using: &generator)
    let signal = (0..<packetsPerTrial * 960).map { index -> Int16 in
      guard index >= onset else { return 0 }
      return Int16(
        toneAmplitude * sin(2 * Double.pi * toneFrequency * Double(index - onset) / 48_000))
    }
    let encoder = try OpusEncoder()
    let inputDecoder = inputIsOpus ? try OpusDecoder(channels: 1) : nil
    let outputDecoder = outputIsOpus ? try OpusDecoder(channels: 1) : nil
    var heardIn: [Int16] = []
    var heardOut: [Int16] = []
    // When the output played so far ends (seconds of virtual time), and where each output
    // packet began: packet start times paired with their first sample's index in `heardOut`.
    var playedUntil = 0.0
    var starts: [(time: Double, sample: Int)] = []
    let pt: UInt8 = sipIsOpus ? 109 : 0
    for index in 0..<packetsPerTrial {
      let frame = Array(signal[index * 960..<(index + 1) * 960])
      let payload: [UInt8]
      if inputIsOpus {
        payload = try encoder.encode(PCMAudioFrame(samples: frame, channels: 1))
      } else {
        payload = G711.encode(stride(from: 0, to: 960, by: 6).map { frame[$0] }, law: .muLaw)
      }
      let inputPT = direction == .webRTCToSIP ? 111 : pt
      let timestamp = inputIsOpus ? index * 960 : index * 160
      let input = packet(payload, pt: inputPT, sequence: index, timestamp: timestamp)
      heardIn += try decodePayload(input, opus: inputDecoder)
      let arrival = Double(index) * 0.020
      let start = clockSeconds(CLOCK_THREAD_CPUTIME_ID)
      let outputs: [[UInt8]]
      if direction == .webRTCToSIP {
        outputs = bridge.receiveFromWebRTC(input).map { [$0] } ?? []
      } else {
        outputs = bridge.receiveFromSIP(input)
      }
      let emitted = arrival + clockSeconds(CLOCK_THREAD_CPUTIME_ID) - start
      for output in outputs {
        let samples = try decodePayload(output, opus: outputDecoder)
        let begin = max(emitted, playedUntil)
        starts.append((begin, heardOut.count))
        heardOut += samples
        playedUntil = begin + Double(samples.count) / Double(outputRate)
      }
    }
    guard let inOnset = onsetSample(heardIn, rate: inputRate),
      let outOnset = onsetSample(heardOut, rate: outputRate),
      let packetStart = starts.last(where: { $0.sample <= outOnset })
    else { throw OnsetFailure(description: "no onset found (\(codec), \(direction))") }
    // The tone is the tone: a detector set off by a codec artefact would be no measurement.
    let after = Array(heardOut[outOnset..<min(heardOut.count, outOnset + outputRate / 10)])
    guard abs(Tone.dominantFrequency(after, rate: Double(outputRate)) - toneFrequency) <= 20
    else { throw OnsetFailure(description: "the output is not the 440 Hz tone") }
    let inTime = Double(inOnset) / Double(inputRate)
    let outTime = packetStart.time + Double(outOnset - packetStart.sample) / Double(outputRate)
    delays.append((outTime - inTime) * 1000)
  }
  return delays
}

/// Why an onset trial measured nothing.
struct OnsetFailure: Error, CustomStringConvertible {
  let description: String
}

/// The `fraction` quantile of `values` (nearest rank).
func quantile(_ values: [Double], _ fraction: Double) -> Double {
  let sorted = values.sorted()
  guard !sorted.isEmpty else { return 0 }
  let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
  return sorted[min(max(rank, 0), sorted.count - 1)]
}
