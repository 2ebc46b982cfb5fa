import FuzzTargets

/// libFuzzer entry point (`scripts/fuzz.sh call-media`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzTarget.callMedia.fuzz(data, size)
}

#if FUZZING
  @_cdecl("FuzzCallMedia_main")
  public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?)
    -> Int32
  { FuzzTarget.runLibFuzzer(argc, argv, fuzzOneInput) }
#else
  @main enum Replay { static func main() { FuzzTarget.callMedia.replayMain() } }
#endif
