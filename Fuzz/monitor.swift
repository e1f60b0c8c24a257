// libFuzzer entry point of the `monitor` target (see FuzzTarget.monitor); built by Scripts/fuzz.
import BLEFuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzTarget.monitor.run(UnsafeBufferPointer(start: data, count: size))
  return 0
}
