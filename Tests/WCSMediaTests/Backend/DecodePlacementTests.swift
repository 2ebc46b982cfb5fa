import XCTest

@testable import WCSEngine
@testable import WCSPeerConnection
@testable import WCSProtocols

/// `DecodePlacement.decide`: the rule that places a played video track's decoding once, at
/// negotiation, from the asked size, frame rate, cores and what the loop already holds.
final class DecodePlacementTests: XCTestCase {
  private static func inputs(
    loopAllowed: Bool = true, width: Int = 0, height: Int = 0, frameRate: Int = 0,
    cores: Int = 2, shareInUse: Double = 0
  ) -> DecodePlacement.Inputs {
    DecodePlacement.Inputs(
      loopAllowed: loopAllowed, width: width, height: height, frameRate: frameRate, cores: cores,
      shareInUse: shareInUse)
  }

  private func decide(_ inputs: DecodePlacement.Inputs, _ tuning: ReceiveTuning = ReceiveTuning())
    -> DecodePlacement
  {
    DecodePlacement.decide(inputs, tuning: tuning)
  }

  func testSizeClassesFollowThePixelCount() {
    XCTAssertEqual(DecodePlacement.SizeClass(width: 320, height: 240), .standard)
    XCTAssertEqual(DecodePlacement.SizeClass(width: 640, height: 480), .standard)
    XCTAssertEqual(DecodePlacement.SizeClass(width: 640, height: 481), .high)
    XCTAssertEqual(DecodePlacement.SizeClass(width: 1280, height: 720), .high)
    XCTAssertEqual(DecodePlacement.SizeClass(width: 0, height: 0), .high, "not asked for")
    XCTAssertEqual(DecodePlacement.SizeClass(width: 1280, height: 0), .high, "one side only")
    XCTAssertEqual(DecodePlacement.SizeClass(width: 1920, height: 1080), .larger)
    XCTAssertEqual(DecodePlacement.SizeClass(width: 1281, height: 720), .larger)
  }

  func testSmallAndUnknownPicturesGoOnTheLoopHoldingCostTimesRate() {
    XCTAssertEqual(decide(Self.inputs(width: 640, height: 480)), .loop(share: 0.06))
    XCTAssertEqual(
      decide(Self.inputs(width: 640, height: 480, frameRate: 15)), .loop(share: 0.03))
    XCTAssertEqual(decide(Self.inputs()), .loop(share: 0.12))
    XCTAssertEqual(decide(Self.inputs(width: 1280, height: 720)), .loop(share: 0.12))
  }

  func testLargerPicturesGoOnTheQueueUnlessTheMachineHasOneCore() {
    XCTAssertEqual(decide(Self.inputs(width: 1920, height: 1080)), .queue)
    XCTAssertEqual(decide(Self.inputs(width: 1920, height: 1080, cores: 8)), .queue)
    XCTAssertEqual(decide(Self.inputs(width: 1920, height: 1080, cores: 1)), .loop(share: 0.3))
    // A higher cost limit lets them on the loop.
    var tuning = ReceiveTuning()
    tuning.inlineDecodeCostLimit = .milliseconds(10)
    tuning.inlineDecodeShare = 0.5
    XCTAssertEqual(decide(Self.inputs(width: 1920, height: 1080), tuning), .loop(share: 0.3))
  }

  func testATrackThatWouldPassTheLoopsShareGoesOnTheQueue() {
    XCTAssertEqual(decide(Self.inputs(shareInUse: 0.13)), .loop(share: 0.12))
    XCTAssertEqual(decide(Self.inputs(shareInUse: 0.14)), .queue)
    XCTAssertEqual(
      decide(Self.inputs(width: 640, height: 480, shareInUse: 0.19)), .loop(share: 0.06))
    XCTAssertEqual(decide(Self.inputs(width: 640, height: 480, shareInUse: 0.2)), .queue)
    // One core: the loop takes it whatever it holds.
    XCTAssertEqual(decide(Self.inputs(cores: 1, shareInUse: 0.9)), .loop(share: 0.12))
  }

  func testTheEngineCanKeepEveryTrackOffTheLoop() {
    XCTAssertEqual(decide(Self.inputs(loopAllowed: false, width: 320, height: 240)), .queue)
    XCTAssertEqual(decide(Self.inputs(loopAllowed: false, cores: 1)), .queue)
  }
}

/// `ReceiveTuning`: its defaults, the one knob that follows others, and the configuration's
/// coalescing window as a view of it.
final class ReceiveTuningTests: XCTestCase {
  func testDefaultsAreTheDocumentedOnes() {
    let tuning = ReceiveTuning()
    XCTAssertEqual(tuning.receiveCoalescing, .milliseconds(25))
    XCTAssertEqual(tuning.audioPlayoutAdvance, .milliseconds(10))
    XCTAssertEqual(tuning.coalescedAudioTurnLeeway, .milliseconds(1))
    XCTAssertEqual(tuning.playPollLeeway, .milliseconds(20))
    XCTAssertEqual(tuning.publishPollLeeway, .milliseconds(50))
    XCTAssertEqual(tuning.maximumPollInterval, .milliseconds(100))
    XCTAssertEqual(tuning.minimumPollInterval, .milliseconds(2))
    XCTAssertEqual(tuning.inlineDecodeCostLimit, .milliseconds(4))
    XCTAssertEqual(tuning.inlineDecodeShare, 0.25)
  }

  func testTheAudioTurnLeewayFollowsTheCoalescingWindowAndTheAdvance() {
    var tuning = ReceiveTuning()
    XCTAssertEqual(tuning.audioTurnLeeway, .milliseconds(1), "25 ms covers a 20 ms turn")
    tuning.receiveCoalescing = .milliseconds(20)
    XCTAssertEqual(tuning.audioTurnLeeway, .milliseconds(1))
    tuning.receiveCoalescing = .milliseconds(19)
    XCTAssertEqual(tuning.audioTurnLeeway, .milliseconds(20), "twice the 10 ms advance")
    tuning.audioPlayoutAdvance = .milliseconds(7)
    XCTAssertEqual(tuning.audioTurnLeeway, .milliseconds(14))
    tuning.receiveCoalescing = .zero
    tuning.coalescedAudioTurnLeeway = .milliseconds(3)
    XCTAssertEqual(tuning.audioTurnLeeway, .milliseconds(14))
  }

  func testTheConfigurationsCoalescingWindowIsTheTuningsKnob() {
    var configuration = PeerConnectionConfiguration(receiveCoalescing: .milliseconds(12))
    XCTAssertEqual(configuration.receiveTuning.receiveCoalescing, .milliseconds(12))
    XCTAssertEqual(configuration.receiveCoalescing, .milliseconds(12))
    configuration.receiveTuning.receiveCoalescing = .milliseconds(30)
    XCTAssertEqual(configuration.receiveCoalescing, .milliseconds(30))
    configuration.receiveCoalescing = .zero
    XCTAssertEqual(configuration.receiveTuning, ReceiveTuning(receiveCoalescing: .zero))
  }
}
