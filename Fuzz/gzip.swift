// libFuzzer entry point of the `gzip` target (see FuzzTarget.gzip); built by Scripts/fuzz.
import BLEFuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzTarget.gzip.run(UnsafeBufferPointer(start: data, count: size))
  return 0
}
