// libFuzzer entry point of the `check` target (see FuzzTarget.check); built by Scripts/fuzz.
import BLEFuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzTarget.check.run(UnsafeBufferPointer(start: data, count: size))
  return 0
}
