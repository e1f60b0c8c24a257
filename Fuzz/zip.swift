// libFuzzer entry point of the `zip` target (see FuzzTarget.zip); built by Scripts/fuzz.
import BLEFuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzTarget.zip.run(UnsafeBufferPointer(start: data, count: size))
  return 0
}
