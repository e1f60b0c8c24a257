// libFuzzer entry point of the `roundtrip` target (see FuzzTarget.roundtrip); built by Scripts/fuzz.
import BLEFuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzTarget.roundtrip.run(UnsafeBufferPointer(start: data, count: size))
  return 0
}
