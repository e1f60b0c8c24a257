// libFuzzer entry point of the `gattmap` target (see FuzzTarget.gattmap); built by Scripts/fuzz.
import BLEFuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzTarget.gattmap.run(UnsafeBufferPointer(start: data, count: size))
  return 0
}
