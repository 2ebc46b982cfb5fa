import WCSMedia

/// What a simulated call does: link behaviour plus estimator settings. Times in microseconds.
struct CongestionScenario {
  var capacitySchedule: [(from: Int64, bitrate: Double)]
  var lossSchedule: [(from: Int64, probability: Double)] = []
  var duration: Int64
  var startBitrate = 300_000
  var minBitrate = 50_000
  var maxBitrate = 5_000_000
  var remb: [(at: Int64, bitrate: Int)] = []
  var boundsChanges: [(at: Int64, min: Int, max: Int)] = []
  var seed: UInt64 = 1
  /// The receiver's clock runs from another origin: only differences may matter.
  var receiverClockOffset: Int64 = 987_654_321
}

/// One 100 ms sample of a simulated call (rates bps, delays µs).
struct CongestionSample {
  var time: Int64
  var target: Int
  var delayBased: Int
  var sendRate: Double
  var maxQueueingDelay: Int64
  var lossFraction: Double
  var overuseThreshold: Double
  var acknowledged: Int?
  var linkCapacity: Int?
}

/// Result of a run: samples every 100 ms plus totals.
struct CongestionTrace {
  var samples: [CongestionSample] = []
  var sentPackets = 0
  var randomLosses = 0
  var queueDrops = 0

  func sample(atSecond second: Double) -> CongestionSample? {
    let time = Int64(second * 1_000_000)
    return samples.last { $0.time <= time }
  }

  func samples(from start: Double, to end: Double) -> [CongestionSample] {
    samples.filter {
      $0.time >= Int64(start * 1_000_000) && $0.time <= Int64(end * 1_000_000)
    }
  }

  /// Mean of the 100 ms target samples in [start, end) seconds.
  func meanTarget(from start: Double, to end: Double) -> Double {
    let window = samples.filter {
      $0.time >= Int64((start * 1_000_000).rounded())
        && $0.time < Int64((end * 1_000_000).rounded())
    }
    guard !window.isEmpty else { return 0 }
    return Double(window.reduce(0) { $0 + $1.target }) / Double(window.count)
  }

  /// Worst queueing delay (µs) seen in [start, end] seconds.
  func worstQueueingDelay(from start: Double, to end: Double) -> Int64 {
    samples(from: start, to: end).map(\.maxQueueingDelay).max() ?? 0
  }

  /// Times (s) where the delay-based rate fell by more than 5 % within one 100 ms sample: the
  /// AIMD back-offs that end each sawtooth period.
  func backOffs(from start: Double, to end: Double) -> [Double] {
    var times: [Double] = []
    let window = samples(from: start, to: end)
    for (previous, sample) in zip(window, window.dropFirst())
    where Double(sample.delayBased) < 0.95 * Double(previous.delayBased) {
      times.append(Double(sample.time) / 1_000_000)
    }
    return times
  }

  /// Means of `window`-second windows starting every 100 ms from `start` while they end by `end`.
  func slidingMeans(window: Double, from start: Double, to end: Double) -> [Double] {
    var means: [Double] = []
    var step = 0
    while start + Double(step) / 10 + window <= end + 1e-9 {
      let begin = start + Double(step) / 10
      means.append(meanTarget(from: begin, to: begin + window))
      step += 1
    }
    return means
  }

  /// The figures the brief asks to see in the test log.
  func summary(_ name: String, seconds: [Double]) -> String {
    var lines = [
      "[\(name)] sent \(sentPackets) packets, random losses \(randomLosses), "
        + "queue drops \(queueDrops)"
    ]
    for second in seconds {
      guard let sample = sample(atSecond: second), let last = samples.last,
        Int64(second * 1_000_000) <= last.time
      else { continue }
      lines.append(
        "  t=\(second)s target \(sample.target / 1000) kbps, delay-based "
          + "\(sample.delayBased / 1000) kbps, send rate \(Int(sample.sendRate / 1000)) kbps, "
          + "queueing delay \(sample.maxQueueingDelay / 1000) ms, "
          + "loss \(Int((sample.lossFraction * 100).rounded())) %, "
          + "link capacity \(sample.linkCapacity.map { "\($0 / 1000) kbps" } ?? "unknown")")
    }
    return lines.joined(separator: "\n")
  }
}

/// A sender (30 fps video in 1200-byte packets plus 20 ms audio) through `Pacer` and
/// `SimulatedLink`; the receiver answers with `TransportFeedbackGenerator` feedback that travels
/// back in one propagation delay and drives `SendSideBandwidthEstimator`. Virtual clock, 1 ms
/// steps.
struct CongestionSimulation {
  enum Media { case audio, video }

  static func run(_ scenario: CongestionScenario) -> CongestionTrace {
    var link = SimulatedLink(capacitySchedule: scenario.capacitySchedule, seed: scenario.seed)
    link.lossSchedule = scenario.lossSchedule
    let estimator = SendSideBandwidthEstimator(
      startBitrate: scenario.startBitrate, minBitrate: scenario.minBitrate,
      maxBitrate: scenario.maxBitrate)
    var pacer = Pacer<Media>(targetBitrate: estimator.targetBitrate)
    var receiver = TransportFeedbackGenerator()
    var feedbackInFlight: [(at: Int64, description: TransportFeedbackDescription)] = []
    var remb = scenario.remb
    var boundsChanges = scenario.boundsChanges
    var trace = CongestionTrace()
    // Start close to the wrap so every run crosses 65535 → 0.
    var nextSequence: UInt16 = 65_000
    var nextFrame: Int64 = 0
    var nextAudio: Int64 = 0
    var sentLog: [(time: Int64, size: Int)] = []
    var sentLogHead = 0
    var bytesInLastSecond = 0
    var maxDelayInSample: Int64 = 0
    for cluster in estimator.takeProbeClusters() { pacer.addProbeCluster(cluster) }

    var now: Int64 = 0
    while now <= scenario.duration {
      while let first = remb.first, first.at <= now {
        estimator.onREMB(REMBUpdate(bitrate: first.bitrate), now: atMicroseconds(now))
        remb.removeFirst()
      }
      while let first = boundsChanges.first, first.at <= now {
        estimator.setBounds(min: first.min, max: first.max)
        boundsChanges.removeFirst()
      }
      while let first = feedbackInFlight.first, first.at <= now {
        estimator.onTransportFeedback(first.description.packetFeedbacks(), now: atMicroseconds(now))
        feedbackInFlight.removeFirst()
      }
      pacer.setTargetBitrate(estimator.targetBitrate)
      for cluster in estimator.takeProbeClusters() { pacer.addProbeCluster(cluster) }

      let allocation = BitrateAllocation.split(
        target: estimator.targetBitrate, audioRange: 16_000...64_000, audioPreferred: 32_000,
        videoRange: 30_000...scenario.maxBitrate)
      if now >= nextAudio {
        pacer.enqueue(
          .audio, priority: .audio, size: allocation.audio / 50 / 8 + 12, now: atMicroseconds(now))
        nextAudio += 20_000
      }
      if now >= nextFrame {
        var frameBytes = allocation.video / 30 / 8
        while frameBytes > 0 {
          let size = min(frameBytes, 1200)
          pacer.enqueue(.video, priority: .video, size: size, now: atMicroseconds(now))
          frameBytes -= size
        }
        nextFrame += 33_333
      }

      for release in pacer.process(now: atMicroseconds(now)) {
        let probeClusterID: Int?
        switch release {
        case .media(_, _, _, let id): probeClusterID = id
        case .padding(_, let id): probeClusterID = id
        }
        estimator.onPacketSent(
          PacketSent(
            transportSequenceNumber: nextSequence, sendTime: atMicroseconds(now),
            size: release.size,
            probeClusterID: probeClusterID))
        link.send(sequenceNumber: nextSequence, size: release.size, now: now)
        nextSequence &+= 1
        trace.sentPackets += 1
        sentLog.append((now, release.size))
        bytesInLastSecond += release.size
      }
      while sentLogHead < sentLog.count, sentLog[sentLogHead].time <= now - 1_000_000 {
        bytesInLastSecond -= sentLog[sentLogHead].size
        sentLogHead += 1
      }

      for delivery in link.deliver(upTo: now) {
        receiver.onPacketReceived(
          transportSequenceNumber: delivery.sequenceNumber,
          arrivalTime: delivery.arrivalTime + scenario.receiverClockOffset)
        maxDelayInSample = max(maxDelayInSample, delivery.queueingDelay)
      }
      for description in receiver.poll(now: now + scenario.receiverClockOffset) {
        feedbackInFlight.append((now + link.propagationDelay, description))
      }

      if now % 100_000 == 0 {
        trace.samples.append(
          CongestionSample(
            time: now, target: estimator.targetBitrate, delayBased: estimator.delayBasedBitrate,
            sendRate: Double(bytesInLastSecond * 8), maxQueueingDelay: maxDelayInSample,
            lossFraction: estimator.lossFraction, overuseThreshold: estimator.overuseThreshold,
            acknowledged: estimator.acknowledgedBitrate,
            linkCapacity: estimator.linkCapacityEstimate))
        maxDelayInSample = 0
      }
      now += 1_000
    }
    trace.randomLosses = link.randomLosses
    trace.queueDrops = link.queueDrops
    return trace
  }
}
