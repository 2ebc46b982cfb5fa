import Foundation
import TestSupport
import XCTest

@testable import WCSEngine
@testable import WCSMedia
@testable import WCSProtocols

/// A file's H.264 read without decoding (`H264FileReader`) and the rule that lets a file
/// source send it as it is (`H264FilePassThrough`), on files ffmpeg makes from the virtual
/// camera's numbered pictures.
final class H264FilePassThroughTests: XCTestCase {
  static let width = 320
  static let height = 240
  static let frameRate = 15
  static let frames = 30

  private var directory: URL!

  override func setUpWithError() throws {
    directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-h264-file-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  }

  override func tearDown() {
    try? FileManager.default.removeItem(at: directory)
  }

  private func makeFile(
    _ name: String, profile: String = "baseline", codecArguments: [String]? = nil
  ) throws -> String {
    let url = directory.appendingPathComponent(name)
    let camera = VirtualCamera(width: Self.width, height: Self.height)
    try NumberedH264File.make(
      at: url, width: Self.width, height: Self.height, frameRate: Self.frameRate,
      frames: Self.frames, profile: profile, keyFrameInterval: 10, codecArguments: codecArguments
    ) { index in
      let image = camera.frame(index).packed()
      return image.y + image.u + image.v
    }
    return url.path
  }

  private static func nalTypes(_ unit: H264FileAccessUnit) -> [UInt8] {
    H264AnnexB.nalUnits(unit.data).compactMap { $0.first.map(H264NALUnitType.of) }
  }

  func testAccessUnitsAreAnnexBWithTheParameterSetsBeforeEveryIDR() throws {
    let reader = try H264FileReader(path: makeFile("baseline.mp4"), loops: false)
    XCTAssertEqual(
      [reader.sequenceParameterSet.width, reader.sequenceParameterSet.height], [320, 240])
    let sps = reader.sequenceParameterSet
    XCTAssertEqual(
      H264ProfileLevelID(
        profileIDC: sps.profileIDC, constraintFlags: sps.constraintFlags, levelIDC: sps.levelIDC
      )?.profile, .constrainedBaseline)
    XCTAssertEqual(reader.framesPerSecond, 15, accuracy: 0.01)
    XCTAssertFalse(reader.hasReordering)
    var units: [H264FileAccessUnit] = []
    while let unit = try reader.nextAccessUnit() { units.append(unit) }
    XCTAssertEqual(units.count, Self.frames)
    XCTAssertEqual(units.indices.filter { units[$0].isKeyFrame }, [0, 10, 20])
    for (index, unit) in units.enumerated() {
      XCTAssertEqual(Array(unit.data.prefix(4)), [0, 0, 0, 1], "picture \(index)")
      XCTAssertEqual(unit.ptsSeconds, Double(index) / 15, accuracy: 1e-6, "picture \(index)")
      let types = Self.nalTypes(unit)
      if unit.isKeyFrame {
        XCTAssertTrue(types.contains(7) && types.contains(8) && types.contains(5), "\(types)")
        XCTAssertLessThan(types.firstIndex(of: 7)!, types.firstIndex(of: 5)!)
      } else {
        XCTAssertEqual(types.filter { $0 == 7 || $0 == 5 }, [], "picture \(index): \(types)")
        XCTAssertTrue(types.contains(1), "picture \(index): \(types)")
      }
    }
    XCTAssertEqual(reader.accessUnitsDropped, 0)
  }

  func testALoopedFileKeepsItsTimestampsGoing() throws {
    let reader = try H264FileReader(path: makeFile("loop.mp4"), loops: true)
    var units: [H264FileAccessUnit] = []
    for _ in 0..<(Self.frames * 2 + 5) { units.append(try XCTUnwrap(reader.nextAccessUnit())) }
    for (index, unit) in units.enumerated() {
      XCTAssertEqual(unit.ptsSeconds, Double(index) / 15, accuracy: 1e-6, "picture \(index)")
    }
    XCTAssertEqual(
      units.indices.filter { units[$0].isKeyFrame }, [0, 10, 20, 30, 40, 50, 60])
    XCTAssertEqual(reader.loopsCompleted, 2)
  }

  func testAFileOfAnotherCodecIsNotRead() throws {
    let path = try makeFile("mpeg4.mp4", codecArguments: ["-c:v", "mpeg4", "-q:v", "3"])
    XCTAssertThrowsError(try H264FileReader(path: path, loops: true)) { error in
      XCTAssertEqual(error as? H264FileReaderError, .notH264(codecName: "mpeg4"))
    }
    XCTAssertThrowsError(try H264FileReader(path: directory.path + "/missing.mp4", loops: true)) {
      guard case .file(.openFailed) = $0 as? H264FileReaderError else {
        return XCTFail("\($0)")
      }
    }
  }

  private static let constrainedBaseline = H264FormatParameters()

  func testTheRulePassesABaselineFileWithoutScalingOrRateConstraints() throws {
    let file = try H264FileReader(path: makeFile("rule.mp4"), loops: true)
    func refusal(
      _ negotiated: H264FormatParameters? = H264FilePassThroughTests.constrainedBaseline,
      _ change: (inout MediaConnectionRequest.Video) -> Void = { _ in }
    ) -> String? {
      var video = MediaConnectionRequest.Video()
      change(&video)
      return H264FilePassThrough.refusal(file: file, constraints: video, negotiated: negotiated)
    }
    XCTAssertNil(refusal())
    XCTAssertNil(
      refusal {
        $0.minWidth = 320
        $0.maxWidth = 320
        $0.maxHeight = 480
        $0.minFrameRate = 15
        $0.maxBitrate = 100_000
      })
    XCTAssertNil(
      refusal(H264FormatParameters(profileLevelID: H264ProfileLevelID(profile: .high, level: 40))))
    XCTAssertEqual(refusal(nil), "H.264 was not negotiated")
    XCTAssertEqual(
      refusal(H264FormatParameters(packetizationMode: 0)),
      "packetization-mode 0 was negotiated, not 1")
    XCTAssertEqual(
      refusal { $0.maxWidth = 160 },
      "the file's width 320 is outside the constraints' min 0 max 160")
    XCTAssertEqual(
      refusal { $0.minHeight = 480 },
      "the file's height 240 is outside the constraints' min 480 max 0")
    XCTAssertEqual(
      refusal { $0.maxFrameRate = 10 },
      "the file's frame rate 15 is outside the constraints' min 0 max 10")
    XCTAssertGreaterThan(file.bitRate, 1000)
    XCTAssertEqual(
      refusal { $0.maxBitrate = 1 }?.hasSuffix("is over maxBitrate 1"), true)
    let level10 = H264FormatParameters(
      profileLevelID: H264ProfileLevelID(profile: .constrainedBaseline, level: 10))
    XCTAssertEqual(refusal(level10)?.contains("is not within the negotiated 42e00a"), true)
  }

  func testAHighProfileFileIsNotPassedThroughUnderABaselineProfile() throws {
    let file = try H264FileReader(path: makeFile("high.mp4", profile: "high"), loops: true)
    XCTAssertEqual(file.sequenceParameterSet.profileIDC, 100)
    let refusal = H264FilePassThrough.refusal(
      file: file, constraints: nil, negotiated: Self.constrainedBaseline)
    XCTAssertEqual(refusal?.hasPrefix("the file's profile-level-id 64"), true, "\(refusal ?? "")")
    XCTAssertNil(
      H264FilePassThrough.refusal(
        file: file, constraints: nil,
        negotiated: H264FormatParameters(
          profileLevelID: H264ProfileLevelID(profile: .high, level: 31))))
  }

  func testANegotiatedProfileAcceptsItsSubsetsAtItsLevelOrBelow() {
    func id(_ profile: H264ProfileLevelID.Profile, _ level: Int) -> H264ProfileLevelID {
      H264ProfileLevelID(profile: profile, level: level)
    }
    XCTAssertTrue(id(.constrainedBaseline, 31).accepts(id(.constrainedBaseline, 13)))
    XCTAssertTrue(id(.baseline, 31).accepts(id(.constrainedBaseline, 31)))
    XCTAssertTrue(id(.high, 31).accepts(id(.main, 30)))
    XCTAssertTrue(id(.main, 31).accepts(id(.constrainedBaseline, H264ProfileLevelID.level1b)))
    XCTAssertFalse(id(.constrainedBaseline, 31).accepts(id(.baseline, 31)))
    XCTAssertFalse(id(.main, 31).accepts(id(.baseline, 31)))
    XCTAssertFalse(id(.constrainedBaseline, 31).accepts(id(.constrainedBaseline, 32)))
    XCTAssertFalse(id(.constrainedBaseline, 10).accepts(id(.constrainedBaseline, 11)))
    XCTAssertEqual(
      H264ProfileLevelID(profileIDC: 0x42, constraintFlags: 0xC0, levelIDC: 0x0D),
      id(.constrainedBaseline, 13))
    XCTAssertNil(H264ProfileLevelID(profileIDC: 110, constraintFlags: 0, levelIDC: 31))
  }
}
