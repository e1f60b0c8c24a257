// libFuzzer entry point of the `keys` target (see FuzzTarget.keys); built by Scripts/fuzz.
import BLEFuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzTarget.keys.run(UnsafeBufferPointer(start: data, count: size))
  return 0
}
