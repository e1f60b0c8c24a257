// libFuzzer entry point of the `pipeline` target (see FuzzTarget.pipeline); built by Scripts/fuzz.
import BLEFuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzTarget.pipeline.run(UnsafeBufferPointer(start: data, count: size))
  return 0
}
