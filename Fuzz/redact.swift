// libFuzzer entry point of the `redact` target (see FuzzTarget.redact); built by Scripts/fuzz.
import BLEFuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzTarget.redact.run(UnsafeBufferPointer(start: data, count: size))
  return 0
}
