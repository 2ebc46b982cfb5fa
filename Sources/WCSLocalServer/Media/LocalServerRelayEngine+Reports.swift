import Foundation
import WCSProtocols

// RTCP reports per leg (RFC 3550 §6.4) and the per-leg statistics log.
extension LocalServerRelayEngine {
  /// The player's counters with the loss its newest receiver reports gave.
  func playerStatistics(_ player: RelayPlayer) -> RelayLegStatistics {
    var statistics = player.statistics
    statistics.packetsLost = player.lostBySSRC.values.reduce(0, +)
    return statistics
  }

  // MARK: - Statistics

  func scheduleStatistics() {
    guard let interval = configuration.statisticsInterval, statisticsTimer == nil, !isShutDown,
      !(publishers.isEmpty && players.isEmpty)
    else { return }
    statisticsTimer = loop.schedule(after: interval) { [weak self] in
      guard let self else { return }
      self.statisticsTimer = nil
      for id in self.publishers.keys.sorted() {
        if let publisher = self.publishers[id] {
          self.configuration.log("media \(id): \(publisher.statistics.summary)")
        }
      }
      for id in self.players.keys.sorted() {
        if let player = self.players[id] {
          self.configuration.log("media \(id): \(self.playerStatistics(player).summary)")
        }
      }
      self.scheduleStatistics()
    }
  }

  // MARK: - Reports

  func scheduleReports() {
    guard reportTimer == nil, !isShutDown, !(publishers.isEmpty && players.isEmpty) else { return }
    reportTimer = loop.schedule(after: .milliseconds(configuration.reportIntervalMillis)) {
      [weak self] in
      guard let self else { return }
      self.reportTimer = nil
      self.sendReports()
      self.scheduleReports()
    }
  }

  func sendReports() {
    let now = loop.mediaNow()
    let ntp = Self.ntpNow()
    emitVideoRates(now: now)
    for publisher in publishers.values where publisher.connected {
      var blocks: [RTCPReportBlock] = []
      for ssrc in publisher.reception.keys.sorted() {
        if let block = publisher.reception[ssrc]?.reportBlock(now: now) { blocks.append(block) }
      }
      let report = RTCPPacket.receiverReport(
        RTCPReceiverReport(ssrc: publisher.rtcpSSRC, reports: Array(blocks.prefix(31))))
      sendRTCP(
        [report], cname: publisher.cname, on: publisher.peerConnection,
        failures: &publisher.statistics.sendFailures)
    }
    for player in players.values where player.connected {
      for (source, rewriter) in player.rewriters {
        guard let last = rewriter.lastTimestamp else { continue }
        let clockRate = player.clockRates[source] ?? 90_000
        let elapsed = UInt32(
          truncatingIfNeeded: MediaTime(now - rewriter.lastSentAt, clockRate: clockRate).ticks)
        let timestamp =
          pulledTimestamp(source, source: player.sourceMediaSessionId, at: now).map {
            $0 &+ rewriter.timestampOffset
          } ?? last &+ elapsed
        let report = RTCPSenderReport(
          ssrc: rewriter.ssrc, ntpTimestamp: ntp, rtpTimestamp: timestamp,
          packetCount: rewriter.packetCount, octetCount: rewriter.octetCount)
        sendRTCP(
          [.senderReport(report)], cname: player.cname, on: player.peerConnection,
          failures: &player.statistics.sendFailures)
      }
    }
  }

  /// Wall clock as a 64-bit NTP timestamp (RFC 3550 §4: seconds since 1900, 32.32 fixed point).
  static func ntpNow() -> UInt64 {
    let seconds = Date().timeIntervalSince1970 + 2_208_988_800
    let whole = UInt64(seconds)
    let fraction = UInt64((seconds - Double(whole)) * 4_294_967_296)
    return whole << 32 | (fraction & 0xFFFF_FFFF)
  }
}
