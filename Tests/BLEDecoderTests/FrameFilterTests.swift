import BLECore
import Testing

@testable import BLEDecoder

@Suite struct FrameFilterTests {
  /// A UUID matches by value, whatever width it was given or sent with.
  @Test func uuidsMatchByValueNotWidth() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    t.discoverStrap()
    let notification = t.att(.controllerToHost, [0x1B, 0x10, 0x00, 0x06, 0x48])
    for text in ["2a37", "0x2A37", "00002a37", "00002a37-0000-1000-8000-00805f9b34fb", "180d", "0000180D-0000-1000-8000-00805F9B34FB"] {
      var filter = FrameFilter()
      filter.uuids = [BluetoothUUID(text)!]
      #expect(filter.matches(notification), "\(text)")
    }
    var other = FrameFilter()
    other.uuids = [BluetoothUUID("2a19")!]
    #expect(!other.matches(notification))
    var handle = FrameFilter()
    handle.attributeHandles = [0x0010]
    #expect(handle.matches(notification))
    handle.attributeHandles = [0x0011]
    #expect(!handle.matches(notification))
  }

  /// `--index`: frames of one controller only.
  @Test func adaptersSelectAController() {
    var t = LinkTranscript()
    let first = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52", adapter: 0)
    let second = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:53", adapter: 1)
    var filter = FrameFilter()
    filter.adapters = [1]
    #expect(!filter.matches(first) && filter.matches(second))
    filter.adapters = [0, 1]
    #expect(filter.matches(first) && filter.matches(second))
  }

  /// An Error Response names its handle for `--handle`.
  @Test func errorResponsesNameTheirHandle() {
    var t = LinkTranscript()
    _ = t.connect(handle: 0x40, peer: "D0:B1:ED:00:48:52")
    _ = t.att(.hostToController, [0x0A, 0x25, 0x00])
    let error = t.att(.controllerToHost, [0x01, 0x0A, 0x25, 0x00, 0x05])
    var filter = FrameFilter()
    filter.attributeHandles = [0x0025]
    #expect(filter.matches(error))
    #expect(error.att?.errorCode == 0x05)
  }
}
