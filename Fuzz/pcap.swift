// libFuzzer entry point of the `pcap` target (see FuzzTarget.pcap); built by Scripts/fuzz.
import BLEFuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzTarget.pcap.run(UnsafeBufferPointer(start: data, count: size))
  return 0
}
