import BLECapture
import BLECore
import BLEDecoder
import BLEEngine
import BLERender
import Foundation
import Testing

/// Values of a handle no table explains are guessed from a run of them; the stream holds the
/// run's frames back until the guess is made, labels them, and hands every frame over in order,
/// on one thread or two, whatever the value share. What it holds is bounded.
@Suite struct HindsightTests {
  /// A btsnoop capture of notifications on handle 0x0010 of connection 1 (no connect event, no
  /// discovery): `values` heart rates one second apart, each followed by `filler` one-byte
  /// L2CAP frames on another connection, then `others` on handle 0x0018.
  static func capture(heartRates values: [UInt8], filler: Int = 0, then others: [UInt8] = []) -> String {
    var writer = CaptureWriter(format: .btsnoopH4)
    var time: Int64 = 1_000_000_000
    func notification(_ value: [UInt8], handle: UInt8 = 0x10) -> [UInt8] {
      let att: [UInt8] = [0x1B, handle, 0x00] + value
      let l2cap: [UInt8] = [UInt8(att.count), 0x00, 0x04, 0x00] + att
      return [0x01, 0x20, UInt8(l2cap.count), 0x00] + l2cap
    }
    for bpm in values {
      writer.write(CaptureRecord(timestamp: time, direction: .controllerToHost, kind: .acl, bytes: notification([0x00, bpm])))
      for index in 0..<filler {
        time += 100
        writer.write(CaptureRecord(timestamp: time, direction: .controllerToHost, kind: .acl, bytes: [0x02, 0x20, 0x05, 0x00, 0x01, 0x00, 0x40, 0x00, UInt8(index & 0xFF)]))
      }
      time += 1_000_000
    }
    // One-byte values on handle 0x0018, eleven seconds apart (a battery level).
    for value in others {
      writer.write(CaptureRecord(timestamp: time, direction: .controllerToHost, kind: .acl, bytes: notification([value], handle: 0x18)))
      time += 11_000_000
    }
    let path = NSTemporaryDirectory() + "hindsight-\(UUID().uuidString).btsnoop"
    FileManager.default.createFile(atPath: path, contents: Data(writer.takeOutput()))
    return path
  }

  static func run(_ path: String, threading: FrameStream.Threading, share: FrameStream.ValueShare = .adaptive, hindsight: Bool = true) throws -> RecordingConsumer<TextRenderer> {
    var options = FrameStream.Options()
    options.threading = threading
    options.valueShare = share
    options.labelsInHindsight = hindsight
    let consumer = RecordingConsumer(TextRenderer(details: false))
    FrameStream(source: try CaptureFile.open(path: path), options: options).run(into: consumer)
    return consumer
  }

  @Test(arguments: [FrameStream.Threading.one, .two])
  func theRunThatMadeTheGuessIsLabelled(threading: FrameStream.Threading) throws {
    let path = Self.capture(heartRates: [60, 61, 62, 63, 64])
    defer { unlink(path) }
    let consumer = try Self.run(path, threading: threading)
    #expect(consumer.facts.count == 5)
    #expect(consumer.facts.allSatisfy { $0.contains("Heart Rate Measurement HeartRateMeasurement") })
    #expect(consumer.facts.map { $0.split(separator: " ").first! } == ["#1", "#2", "#3", "#4", "#5"])
    // Live streams show each frame as it comes: the first two stay unlabelled.
    let live = try Self.run(path, threading: threading, hindsight: false)
    #expect(live.facts.map { $0.contains("Heart Rate Measurement") } == [false, false, true, true, true])
  }

  /// A run broken before the guess labels nothing it did not make: two plausible values, an
  /// implausible one, then a run of three.
  @Test(arguments: [FrameStream.Threading.one, .two])
  func aBrokenRunIsNotLabelled(threading: FrameStream.Threading) throws {
    let path = Self.capture(heartRates: [60, 61, 0, 62, 63, 64])
    defer { unlink(path) }
    let consumer = try Self.run(path, threading: threading)
    #expect(consumer.facts.map { $0.contains("Heart Rate Measurement") } == [false, false, false, true, true, true])
  }

  /// Frames between the values of a run are held too, and handed over in order; past the
  /// bound the oldest go unlabelled rather than waiting longer.
  @Test(arguments: [FrameStream.Threading.one, .two], [100, 400])
  func whatIsHeldIsBounded(threading: FrameStream.Threading, filler: Int) throws {
    let path = Self.capture(heartRates: [60, 61, 62, 63], filler: filler)
    defer { unlink(path) }
    let consumer = try Self.run(path, threading: threading)
    let numbers = consumer.facts.map { Int($0.split(separator: " ").first!.dropFirst())! }
    #expect(numbers == Array(1...(4 * (filler + 1))))
    let labelled = consumer.facts.filter { $0.contains("[16 notification") }.map { $0.contains("Heart Rate Measurement") }
    // 100 frames between values: the run of three (frames 1–203) fits in what is held. 400
    // (values in frames 1, 402, 803): frame 1 waits more than 512 frames and goes as it was;
    // frame 402 is still held when frame 803 makes the guess.
    #expect(labelled == (filler == 100 ? [true, true, true, true] : [false, true, true, true]))
  }

  /// Whatever the threading and value share: the same facts, the same text.
  @Test func everyArrangementGivesTheSameFrames() throws {
    let path = Self.capture(heartRates: Array(60...90), filler: 3, then: [90, 90, 89])
    defer { unlink(path) }
    let reference = try Self.run(path, threading: .one)
    for share in [FrameStream.ValueShare.fixed(0), .fixed(8), .adaptive] {
      let other = try Self.run(path, threading: .two, share: share)
      #expect(other.facts == reference.facts)
      #expect(other.out.text == reference.out.text)
    }
    #expect(reference.facts.filter { $0.contains("Battery Level") }.count == 3)
  }
}
