// libFuzzer entry point of the `packetlogger` target (see FuzzTarget.packetlogger); built by Scripts/fuzz.
import BLEFuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzTarget.packetlogger.run(UnsafeBufferPointer(start: data, count: size))
  return 0
}
