import FuzzTargets

/// libFuzzer entry point (`scripts/fuzz.sh pull`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzTarget.pull.fuzz(data, size)
}

#if FUZZING
  @_cdecl("FuzzPull_main")
  public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?)
    -> Int32
  { FuzzTarget.runLibFuzzer(argc, argv, fuzzOneInput) }
#else
  @main enum Replay { static func main() { FuzzTarget.pull.replayMain() } }
#endif
