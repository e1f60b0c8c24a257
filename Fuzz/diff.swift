// libFuzzer entry point of the `diff` target (see FuzzTarget.diff); built by Scripts/fuzz.
import BLEFuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzTarget.diff.run(UnsafeBufferPointer(start: data, count: size))
  return 0
}
