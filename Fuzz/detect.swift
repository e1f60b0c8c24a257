// libFuzzer entry point of the `detect` target (see FuzzTarget.detect); built by Scripts/fuzz.
import BLEFuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzTarget.detect.run(UnsafeBufferPointer(start: data, count: size))
  return 0
}
