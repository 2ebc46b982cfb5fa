import FuzzTargets

/// libFuzzer entry point (`scripts/fuzz.sh h264`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzTarget.h264.fuzz(data, size)
}

#if FUZZING
  @_cdecl("FuzzH264_main")
  public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?)
    -> Int32
  { FuzzTarget.runLibFuzzer(argc, argv, fuzzOneInput) }
#else
  @main enum Replay { static func main() { FuzzTarget.h264.replayMain() } }
#endif
