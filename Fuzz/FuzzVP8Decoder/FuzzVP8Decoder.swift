import FuzzTargets

/// libFuzzer entry point (`scripts/fuzz.sh vp8-decoder`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzTarget.vp8Decoder.fuzz(data, size)
}

#if FUZZING
  @_cdecl("FuzzVP8Decoder_main")
  public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?)
    -> Int32
  { FuzzTarget.runLibFuzzer(argc, argv, fuzzOneInput) }
#else
  @main enum Replay { static func main() { FuzzTarget.vp8Decoder.replayMain() } }
#endif
