/// Send-side bandwidth estimation (draft-ietf-rmcat-gcc-02 with transport-wide feedback, in the
/// shape of libwebrtc's GoogCC): target = clamp(min(delay-based AIMD rate, loss-based rate,
/// REMB), min, max).
///
/// Sans-I/O: report every packet the pacer sends (`onPacketSent`), every transport feedback
/// (`onTransportFeedback`), REMB (`onREMB`), and read `targetBitrate` or set
/// `onTargetBitrateChanged`. Pass probe clusters from `takeProbeClusters()` to the `Pacer`.
/// Not thread-safe: use from one thread (the event loop).
public final class SendSideBandwidthEstimator {
  /// Delay-based usage from the last processed feedback.
  public private(set) var bandwidthUsage: TrendlineEstimator.BandwidthUsage = .normal
  /// Current target, bits per second.
  public private(set) var targetBitrate: Int
  /// Smoothed round-trip time from feedback (now − send time of the newest acked packet).
  public private(set) var roundTripTime = MediaDuration.milliseconds(200)
  /// Last REMB cap, bps (`nil` until one arrives).
  public private(set) var rembBitrate: Int?
  /// Called with the new target (bps) whenever it changes.
  public var onTargetBitrateChanged: ((Int) -> Void)?

  private var minBitrate: Int
  private var maxBitrate: Int
  private var unwrapper = RTPExtendedSequenceNumber()
  private var history: [Int64: SentRecord] = [:]
  private var oldestInHistory: Int64?
  private var newestSent: Int64?
  private var interArrival = InterArrivalGrouper()
  private var trendline = TrendlineEstimator()
  private var rateController: AIMDRateController
  private var ackedBitrateEstimator = AcknowledgedBitrateEstimator()
  private var lossController = LossBasedController()
  private var probeController = ProbeController()
  private var probes: [Int: ProbeClusterMeasurement] = [:]
  private var lastArrival: MediaInstant?

  /// Arrival times beyond ±2^52 µs of the receiver clock's origin are rejected (keeps all
  /// later arithmetic overflow-free).
  static let maximumAbsoluteTime = MediaInstant(nanoseconds: (1 << 52) * 1_000)
  /// A gap between consecutive arrivals longer than this resets the delay filter.
  static let arrivalJumpLimit = MediaDuration.seconds(3)

  private struct SentRecord {
    var sendTime: MediaInstant
    var size: Int
    var probeClusterID: Int?
    var acknowledged = false
    var reported = false
  }

  /// Creates an estimator. Rates in bps; `startBitrate` is clamped into `[minBitrate,
  /// maxBitrate]`. With `probing`, start-up probes are offered through `takeProbeClusters()`.
  public init(
    startBitrate: Int = 300_000, minBitrate: Int = 30_000, maxBitrate: Int = 2_500_000,
    probing: Bool = true
  ) {
    let low = max(0, minBitrate)
    let high = max(low, maxBitrate)
    self.minBitrate = low
    self.maxBitrate = high
    let start = min(max(startBitrate, low), high)
    targetBitrate = start
    rateController = AIMDRateController(
      startBitrate: Double(start), bounds: Double(low)...Double(high))
    if probing { probeController.start(startBitrate: start, maxBitrate: high) }
  }

  /// Throughput of acknowledged packets, bps (`nil` until measured).
  public var acknowledgedBitrate: Int? { ackedBitrateEstimator.bitrate.map { Int($0) } }
  /// Delay-based rate, bps.
  public var delayBasedBitrate: Int { Int(rateController.bitrate) }
  /// Link capacity estimated from the throughput at past overuses, bps (`nil` while unknown, i.e.
  /// while the delay-based rate still grows multiplicatively).
  public var linkCapacityEstimate: Int? {
    rateController.linkCapacityEstimate.estimate.map { Int($0) }
  }
  /// Loss-based rate, bps (`nil` until the first loss measurement).
  public var lossBasedBitrate: Int? { lossController.bitrate.map { Int($0) } }
  /// Loss fraction (0…1) of the last loss measurement.
  public var lossFraction: Double { lossController.lastLossFraction }
  /// Adaptive overuse threshold, ms.
  public var overuseThreshold: Double { trendline.threshold }

  /// Sets the bounds from the media constraints (bps). `max` below `min` is raised to `min`.
  public func setBounds(min newMin: Int, max newMax: Int) {
    minBitrate = Swift.max(0, newMin)
    maxBitrate = Swift.max(minBitrate, newMax)
    rateController.setBounds(Double(minBitrate)...Double(maxBitrate))
    publish(computeTarget())
  }

  /// Returns and forgets the probe clusters the pacer should run.
  public func takeProbeClusters() -> [ProbeCluster] { probeController.takeClusters() }

  /// Records a packet the pacer sent (must be called in send order).
  public func onPacketSent(_ packet: PacketSent) {
    let sequence = unwrapper.extend(packet.transportSequenceNumber)
    history[sequence] = SentRecord(
      sendTime: packet.sendTime, size: packet.size, probeClusterID: packet.probeClusterID)
    if oldestInHistory == nil { oldestInHistory = sequence }
    newestSent = max(newestSent ?? sequence, sequence)
    if let id = packet.probeClusterID { probes[id, default: ProbeClusterMeasurement()].onSent() }
    pruneHistory(now: packet.sendTime)
  }

  /// Sets a REMB cap (bps).
  public func onREMB(_ remb: REMBUpdate, now: MediaInstant) {
    rembBitrate = max(0, remb.bitrate)
    publish(computeTarget())
  }

  /// Takes an RTT measured elsewhere (RTCP receiver reports).
  public func onRoundTripTime(_ rtt: MediaDuration) {
    guard rtt > .zero else { return }
    // In whole microseconds, as the estimator has always smoothed it.
    roundTripTime = .microseconds(Int((roundTripTime.microseconds * 7 + rtt.microseconds) / 8))
  }

  /// Processes the per-packet results of one transport feedback received at `now`.
  /// Unknown sequence numbers (not sent, or too old) are ignored.
  public func onTransportFeedback(_ feedback: [PacketFeedback], now: MediaInstant) {
    var acknowledged: [(send: MediaInstant, arrival: MediaInstant, size: Int)] = []
    var lost = 0
    var newestAckedSend: MediaInstant?
    for entry in feedback {
      // Arrival times come from the network: absurd ones are dropped before any arithmetic.
      if let arrival = entry.arrivalTime,
        !(-Self.maximumAbsoluteTime.nanoseconds...Self.maximumAbsoluteTime.nanoseconds)
          .contains(arrival.nanoseconds)
      {
        continue
      }
      let sequence = unwrapper.extended(entry.transportSequenceNumber)
      guard var record = history[sequence], !record.acknowledged else { continue }
      let firstReport = !record.reported
      record.reported = true
      if let arrival = entry.arrivalTime {
        record.acknowledged = true
        acknowledged.append((record.sendTime, arrival, record.size))
        newestAckedSend = max(newestAckedSend ?? record.sendTime, record.sendTime)
      } else if firstReport {
        lost += 1
      }
      if firstReport, let id = record.probeClusterID {
        probes[id]?.onReported(send: record.sendTime, arrival: entry.arrivalTime, size: record.size)
      }
      history[sequence] = record
    }
    if let newestAckedSend { onRoundTripTime(now - newestAckedSend) }
    acknowledged.sort { $0.arrival < $1.arrival }
    for packet in acknowledged {
      // A jump of the receiver's clock (or its 24-bit reference time wrapping) is not delay.
      if let last = lastArrival,
        packet.arrival - last > Self.arrivalJumpLimit
          || last - packet.arrival > Self.arrivalJumpLimit
      {
        interArrival.reset()
        trendline = TrendlineEstimator()
        ackedBitrateEstimator = AcknowledgedBitrateEstimator()
      }
      lastArrival = packet.arrival
      ackedBitrateEstimator.onAcknowledged(arrivalTime: packet.arrival, size: packet.size)
      if let deltas = interArrival.add(
        sendTime: packet.send, arrivalTime: packet.arrival, size: packet.size)
      {
        bandwidthUsage = trendline.update(deltas)
      }
    }
    handleProbeResults(now: now)
    if !acknowledged.isEmpty { updateDelayBased(now: now) }
    lossController.update(
      received: acknowledged.count, lost: lost, currentTarget: Double(targetBitrate),
      rtt: roundTripTime, now: now)
    publish(computeTarget())
  }

  private func updateDelayBased(now: MediaInstant) {
    let acked = ackedBitrateEstimator.bitrate
    if bandwidthUsage == .overusing {
      guard rateController.canReduceFurther(now: now, rtt: roundTripTime, ackedBitrate: acked)
      else { return }
    }
    rateController.update(usage: bandwidthUsage, ackedBitrate: acked, rtt: roundTripTime, now: now)
  }

  private func handleProbeResults(now: MediaInstant) {
    for (id, measurement) in probes where measurement.isComplete && measurement.sentPackets > 0 {
      probes[id] = nil
      let result = measurement.result()
      probeController.onProbeResult(id: id, bitrate: result, maxBitrate: maxBitrate)
      // A probe only ever raises the delay-based rate; overuse brings it back down.
      if let result, result > rateController.bitrate, bandwidthUsage != .overusing {
        rateController.setEstimate(result, now: now)
        lossController.onProbeResult(result)
      }
    }
  }

  private func computeTarget() -> Int {
    var target = rateController.bitrate
    if let loss = lossController.bitrate { target = min(target, loss) }
    if let rembBitrate { target = min(target, Double(rembBitrate)) }
    target = min(target, Double(maxBitrate))
    return Int(max(target, Double(minBitrate)))
  }

  private func publish(_ target: Int) {
    guard target != targetBitrate else { return }
    targetBitrate = target
    onTargetBitrateChanged?(target)
  }

  private func pruneHistory(now: MediaInstant) {
    guard var oldest = oldestInHistory, let newest = newestSent else { return }
    // Feedback older than 10 s is useless; stale probe clusters are dropped with it.
    while oldest < newest {
      if let record = history[oldest], now - record.sendTime < .seconds(10) { break }
      history[oldest] = nil
      oldest += 1
    }
    oldestInHistory = oldest
    if probes.count > 16 { probes.removeAll() }
  }
}
