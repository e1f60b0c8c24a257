// libFuzzer entry point of the `bluez` target (see FuzzTarget.bluez); built by Scripts/fuzz.
import BLEFuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzTarget.bluez.run(UnsafeBufferPointer(start: data, count: size))
  return 0
}
