// libFuzzer entry point of the `btsnoop` target (see FuzzTarget.btsnoop); built by Scripts/fuzz.
import BLEFuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzTarget.btsnoop.run(UnsafeBufferPointer(start: data, count: size))
  return 0
}
