// libFuzzer entry point of the `packets` target (see FuzzTarget.packets); built by Scripts/fuzz.
import BLEFuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzTarget.packets.run(UnsafeBufferPointer(start: data, count: size))
  return 0
}
