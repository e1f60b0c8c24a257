// libFuzzer entry point of the `decoders` target (see FuzzTarget.decoders); built by Scripts/fuzz.
import BLEFuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzTarget.decoders.run(UnsafeBufferPointer(start: data, count: size))
  // The decoders of this input are gone: their interned names go too (else the budget fills).
  FuzzTarget.releaseDecoderText()
  return 0
}
