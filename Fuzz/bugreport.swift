// libFuzzer entry point of the `bugreport` target (see FuzzTarget.bugreport); built by Scripts/fuzz.
import BLEFuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzTarget.bugreport.run(UnsafeBufferPointer(start: data, count: size))
  return 0
}
