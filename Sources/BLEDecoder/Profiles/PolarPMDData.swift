import BLECore

// Polar PMD data frames (characteristic FB005C82, notified): measurement type, time stamp,
// frame type, samples (shared/reference/gatt-payloads.md §8.4).

extension PolarPMD {
  /// One PMD data frame: `type(1) timestamp(u64, ns since 2000-01-01 UTC, of the last sample)
  /// frame_type(1: bits 0–6 type, bit 7 delta-compressed) samples`.
  ///
  /// Samples are the raw values of the frame (the SDK multiplies them by the conversion factor
  /// of the settings response, when there is one). A delta frame does not say its channel
  /// count or resolution (they come from the start request): they are worked out from the
  /// frame, the layout of the measurement type first (ECG 1 channel × 3 bytes, PPG 4 × 3,
  /// ACC, gyroscope and magnetometer 3 × 2), and the layout used is in the fields.
  public struct DataFrame: CharacteristicValue, Equatable {
    public enum Samples: Sendable, Equatable {
      /// Integer samples, `channels` values each, one after another.
      case integers([Int64], channels: Int)
      /// float32 samples (gyroscope, pressure, temperature), `channels` values each.
      case reals([Float], channels: Int)
      case intervals([PPISample])
      /// A frame type the reference does not define for the measurement type.
      case undecoded([UInt8])
    }

    /// How a delta frame was read.
    public struct DeltaLayout: Sendable, Equatable {
      public var channels: Int
      /// Bytes of each channel of the reference sample (the resolution rounded up to bytes).
      public var bytesPerChannel: Int
      /// Each block's delta width in bits and sample count.
      public var blocks: [DeltaBlock]
      /// Whether the layout is the measurement type's own (false: another one fit the frame).
      public var isTypeLayout: Bool
    }

    public struct DeltaBlock: Sendable, Equatable {
      public var bitWidth: UInt8
      public var sampleCount: UInt8
    }

    public var typeByte: UInt8
    public var timestamp: UInt64
    public var frameTypeByte: UInt8
    public var samples: Samples
    public var delta: DeltaLayout?

    public var measurementType: UInt8 { typeByte & 0x3F }
    public var frameType: UInt8 { frameTypeByte & 0x7F }
    public var isCompressed: Bool { frameTypeByte & 0x80 != 0 }
    /// Samples in the frame.
    public var sampleCount: Int {
      switch samples {
      case let .integers(values, channels): return channels > 0 ? values.count / channels : 0
      case let .reals(values, channels): return channels > 0 ? values.count / channels : 0
      case .intervals(let values): return values.count
      case .undecoded: return 0
      }
    }

    public init(typeByte: UInt8, timestamp: UInt64, frameTypeByte: UInt8, samples: Samples, delta: DeltaLayout? = nil) {
      self.typeByte = typeByte
      self.timestamp = timestamp
      self.frameTypeByte = frameTypeByte
      self.samples = samples
      self.delta = delta
    }

    public init(parsing reader: inout ByteReader) throws(DecodeError) {
      reader.layer = .profile
      typeByte = try reader.readUInt8()
      timestamp = try reader.readUInt64LE()
      frameTypeByte = try reader.readUInt8()
      delta = nil
      let type = typeByte & 0x3F
      let frame = frameTypeByte & 0x7F
      if frameTypeByte & 0x80 != 0 {
        (samples, delta) = try Self.deltaFrame(&reader, type: type)
        return
      }
      switch (type, frame) {
      case (0, 0): samples = .integers(try Self.integers(&reader, channels: 1, bytes: 3), channels: 1)
      case (1, 0): samples = .integers(try Self.integers(&reader, channels: 4, bytes: 3), channels: 4)
      case (2, 0...2): samples = .integers(try Self.integers(&reader, channels: 3, bytes: Int(frame) + 1), channels: 3)
      case (3, 0):
        var intervals: [PPISample] = []
        while !reader.isAtEnd { intervals.append(try PPISample(parsing: &reader)) }
        samples = .intervals(intervals)
      case (5, 1): samples = .reals(try Self.floats(&reader, channels: 3), channels: 3)
      case (11, 0), (12, 0): samples = .reals(try Self.floats(&reader, channels: 1), channels: 1)
      default: samples = .undecoded(Array(reader.readRemaining()))
      }
    }

    /// Whole samples of `channels` signed little-endian values of `bytes` bytes; a partial
    /// sample at the end is left (the decoder reports the bytes left over).
    static func integers(_ reader: inout ByteReader, channels: Int, bytes: Int) throws(DecodeError) -> [Int64] {
      var values: [Int64] = []
      values.reserveCapacity(reader.remaining / bytes)
      while reader.remaining >= channels * bytes {
        for _ in 0..<channels { values.append(try signed(&reader, bytes: bytes)) }
      }
      return values
    }

    static func floats(_ reader: inout ByteReader, channels: Int) throws(DecodeError) -> [Float] {
      var values: [Float] = []
      while reader.remaining >= channels * 4 {
        for _ in 0..<channels { values.append(Float(bitPattern: try reader.readUInt32LE())) }
      }
      return values
    }

    /// A signed little-endian number of 1–4 bytes.
    static func signed(_ reader: inout ByteReader, bytes: Int) throws(DecodeError) -> Int64 {
      var raw: UInt64 = 0
      for index in 0..<bytes { raw |= UInt64(try reader.readUInt8()) << (8 * UInt64(index)) }
      let shift = UInt64(64 - 8 * bytes)
      return Int64(bitPattern: raw << shift) >> shift
    }

    /// Channels and bytes per channel of a delta frame's type (ECG, PPG, ACC, gyroscope, magnetometer).
    static func typeLayout(_ type: UInt8) -> (channels: Int, bytes: Int)? {
      switch type {
      case 0: return (1, 3)
      case 1: return (4, 3)
      case 2, 5, 6: return (3, 2)
      default: return nil
      }
    }

    /// Whether `payload` reads as a reference sample of `channels` × `bytes` bytes followed by
    /// whole delta blocks (widths 1–32 bits, at least one sample each; at least one block when
    /// `needsBlock`), to the last byte.
    static func fits(_ payload: ByteView, channels: Int, bytes: Int, needsBlock: Bool = false) -> Bool {
      var offset = channels * bytes
      guard offset <= payload.count, !needsBlock || offset < payload.count else { return false }
      let base = payload.startIndex
      while offset < payload.count {
        guard offset + 2 <= payload.count else { return false }
        let width = Int(payload[base + offset]), count = Int(payload[base + offset + 1])
        guard (1...32).contains(width), count > 0 else { return false }
        offset += 2 + (width * channels * count + 7) / 8
      }
      return offset == payload.count
    }

    /// The samples of a delta frame, with the layout they were read with.
    static func deltaFrame(_ reader: inout ByteReader, type: UInt8) throws(DecodeError) -> (Samples, DeltaLayout?) {
      var ahead = reader
      let payload = ahead.readRemaining()
      var layout: (channels: Int, bytes: Int)
      var isTypeLayout = true
      if let own = typeLayout(type) {
        // The type's channel count; its resolution first, then the other byte widths (with at
        // least one block: a reference sample alone fits too many). When nothing fits, the
        // type's own layout is read: it says where the frame breaks.
        let widths = [own.bytes] + [1, 2, 3, 4].filter { $0 != own.bytes }
        layout = (own.channels, widths.first { fits(payload, channels: own.channels, bytes: $0, needsBlock: $0 != own.bytes) } ?? own.bytes)
        isTypeLayout = layout.bytes == own.bytes
      } else {
        let candidates = (1...8).flatMap { channels in (1...4).map { (channels: channels, bytes: $0) } }
          .filter { fits(payload, channels: $0.channels, bytes: $0.bytes, needsBlock: true) }
        guard candidates.count == 1 else { return (.undecoded(Array(reader.readRemaining())), nil) }
        layout = candidates[0]
        isTypeLayout = false
      }
      var blocks: [DeltaBlock] = []
      let values = try decodeDelta(&reader, channels: layout.channels, bytes: layout.bytes, blocks: &blocks)
      return (.integers(values, channels: layout.channels), DeltaLayout(channels: layout.channels, bytesPerChannel: layout.bytes, blocks: blocks, isTypeLayout: isTypeLayout))
    }

    /// At most this many samples come out of one delta frame (a block of width 0 takes no bytes).
    static let maximumDeltaSamples = 16_384

    /// The reference sample, then each block: `bit_width(1) count(1) deltas`, the deltas
    /// packed least significant bit first, each a two's-complement `bit_width`-bit number added
    /// to the previous sample's channel.
    static func decodeDelta(_ reader: inout ByteReader, channels: Int, bytes: Int, blocks: inout [DeltaBlock]) throws(DecodeError) -> [Int64] {
      var values: [Int64] = []
      for _ in 0..<channels { values.append(try signed(&reader, bytes: bytes)) }
      while !reader.isAtEnd {
        let width = try reader.readUInt8()
        let count = try reader.readUInt8()
        guard width <= 32 else { throw DecodeError(.invalidValue(field: "delta bit width", value: UInt64(width)), layer: .profile, offset: reader.offset - 2) }
        blocks.append(DeltaBlock(bitWidth: width, sampleCount: count))
        let total = Int(width) * channels * Int(count)
        let packed = try reader.readBytes(count: (total + 7) / 8)
        guard values.count / channels + Int(count) <= maximumDeltaSamples else {
          throw DecodeError(.invalidValue(field: "delta sample count", value: UInt64(values.count / channels + Int(count))), layer: .profile, offset: reader.offset)
        }
        var bit = 0
        for _ in 0..<Int(count) {
          let previous = values.count - channels
          for channel in 0..<channels {
            var raw: UInt64 = 0
            for index in 0..<Int(width) {
              let byte = packed[packed.startIndex + (bit + index) / 8]
              raw |= UInt64((byte >> UInt8((bit + index) % 8)) & 1) << UInt64(index)
            }
            bit += Int(width)
            let delta = width == 0 ? 0 : Int64(bitPattern: raw << UInt64(64 - Int(width))) >> UInt64(64 - Int(width))
            values.append(values[previous + channel] &+ delta)
          }
        }
      }
      return values
    }

    public static let decoder = CharacteristicDecoder(uuid: PolarPMD.dataUUID, key: "polar_pmd_data", DataFrame.self, summarySaysItAll: true)

    /// The time stamp as UTC text, `2025-01-01 00:00:00.153846153`.
    public var timestampText: String { PolarPMD.utcText(nanosecondsSince2000: timestamp) }

    public func writeFields(to fields: inout FieldList, context: ValueContext) {
      fields.code("measurement_type", "Measurement type", measurementType, width: 2, name: PolarPMD.measurementTypeName(measurementType))
      fields.hex("timestamp_ns", "Time stamp (ns since 2000)", timestamp, width: 16)
      fields.add("timestamp_utc", "Time stamp", .text(timestampText))
      fields.uint("frame_type", "Frame type", frameType)
      fields.flag("compressed", "Delta compressed", isCompressed)
      if let delta {
        fields.uint("channel_count", "Channels", delta.channels)
        fields.uint("reference_bytes_per_channel", "Reference bytes per channel", delta.bytesPerChannel)
        fields.beginArray("delta_blocks", "Delta blocks")
        for block in delta.blocks {
          fields.beginObject("block", "Block")
          fields.uint("delta_bit_width", "Bit width", block.bitWidth)
          fields.uint("sample_count", "Samples", block.sampleCount)
          fields.end()
        }
        fields.end()
      }
      fields.uint("sample_count", "Samples", sampleCount)
      switch samples {
      case let .integers(values, channels):
        let kind = sampleKey
        if kind.flat {
          fields.beginArray(kind.key, kind.label)
          for value in values { fields.int(kind.key, kind.label, value) }
          fields.end()
        } else {
          fields.beginArray(kind.key, kind.label)
          var index = 0
          while index + channels <= values.count {
            fields.beginArray("sample", "Sample")
            for value in values[index..<index + channels] { fields.int("value", "Value", value) }
            fields.end()
            index += channels
          }
          fields.end()
        }
      case let .reals(values, channels):
        let kind = sampleKey
        fields.beginArray(kind.key, kind.label)
        var index = 0
        while index + channels <= values.count {
          if !kind.flat { fields.beginArray("sample", "Sample") }
          for value in values[index..<index + channels] { fields.real("value", "Value", PolarPMD.real(value), places: 4, unit: kind.unit) }
          if !kind.flat { fields.end() }
          index += channels
        }
        fields.end()
      case .intervals(let intervals):
        fields.beginArray("ppi_samples", "PP intervals")
        for sample in intervals { sample.writeFields(to: &fields) }
        fields.end()
      case .undecoded(let bytes):
        fields.bytes("data", "Data", bytes[...])
      }
    }

    /// The key the samples go under: one key per measurement type and shape, with the unit
    /// in it when the values are in that unit. `flat`: one value per sample (an array of
    /// numbers); otherwise each sample is an array of its channels.
    var sampleKey: (key: Name, label: Name, unit: Name, flat: Bool) {
      switch (measurementType, samples) {
      case (0, .integers(_, 1)): return ("samples_uv", "Samples (µV)", "µV", true)
      case (2, .integers(_, 3)): return ("samples_mg", "Samples x, y, z (mG)", "mG", false)
      case (5, .reals(_, 3)): return ("samples_dps", "Samples x, y, z (deg/s)", "deg/s", false)
      case (11, .reals(_, 1)): return ("samples_hpa", "Samples (hPa)", "hPa", true)
      case (12, .reals(_, 1)): return ("samples_c", "Samples (°C)", "°C", true)
      default: return ("samples", "Samples", "", false)
      }
    }

    public func summarize(into summary: inout SummaryLine, context: ValueContext) {
      PolarPMD.summarizeType(measurementType, into: &summary)
      if isCompressed { summary.append(.text(" (delta)")) }
      if case .undecoded(let bytes) = samples {
        summary.append(.text(" frame type "))
        summary.append(.number(Int(frameType)))
        summary.append(.text(": "))
        summary.append(.number(bytes.count))
        summary.append(.text(" bytes"))
        return
      }
      summary.append(.text(": "))
      summary.append(.number(sampleCount))
      summary.append(.text(sampleCount == 1 ? " sample" : " samples"))
      guard sampleCount > 0 else { return }
      let unit = sampleKey.unit
      switch samples {
      case let .integers(values, channels):
        Self.summarizeRanges(channels, unit: unit, into: &summary) { channel in
          stride(from: channel, to: values.count, by: channels).map { Double(values[$0]) }
        }
      case let .reals(values, channels):
        Self.summarizeRanges(channels, unit: unit, into: &summary) { channel in
          stride(from: channel, to: values.count, by: channels).map { PolarPMD.real(values[$0]) }
        }
      case .intervals(let intervals):
        PPISample.summarize(intervals, into: &summary)
      case .undecoded:
        break
      }
    }

    /// ", -48…1350 µV" for one channel, ", x -128…5, y -5…127, z -1…64 mG" for three,
    /// ", 4 channels" otherwise.
    static func summarizeRanges(_ channels: Int, unit: Name, into summary: inout SummaryLine, values: (Int) -> [Double]) {
      let names: [Name]
      switch channels {
      case 1: names = [""]
      case 3: names = ["x ", "y ", "z "]
      default:
        summary.append(.text(", "))
        summary.append(.number(channels))
        summary.append(.text(" channels"))
        return
      }
      for channel in 0..<channels {
        let column = values(channel)
        guard let low = column.min(), let high = column.max() else { continue }
        summary.append(.text(", "))
        summary.append(.text(names[channel]))
        summary.append(.real(low, places: 4))
        if high != low {
          summary.append(.text("…"))
          summary.append(.real(high, places: 4))
        }
      }
      if !unit.isEmpty {
        summary.append(.text(" "))
        summary.append(.text(unit))
      }
    }

    public func diagnose(into diagnostics: inout [Diagnostic], context: ValueContext) {
      let name = PolarPMD.measurementTypeName(measurementType).map { $0.description } ?? "type \(measurementType)"
      if case .undecoded(let bytes) = samples {
        if isCompressed {
          ProfileSupport.add(.profileVendorValueUndecoded, &diagnostics, "PMD delta frame of \(name): no single layout (1–8 channels × 1–4 bytes) fits its \(bytes.count) bytes; samples not decoded")
        } else {
          ProfileSupport.add(.profileVendorCodeUnknown, &diagnostics, "PMD frame type \(frameType) of \(name) is not in the reference; samples not decoded")
        }
      }
      if let delta, !delta.isTypeLayout {
        ProfileSupport.add(.profileVendorLayoutGuessed, &diagnostics, "PMD delta frame of \(name) read as \(delta.channels) channels × \(delta.bytesPerChannel) bytes (the layout that fits; not the type's usual one)")
      }
    }
  }

  /// One PPI sample (6 bytes): HR (bpm), PP interval and its error estimate (ms), flags (bit 0
  /// blocker / invalid, bit 1 skin contact, bit 2 skin contact supported; SDK and spec PDF).
  public struct PPISample: Sendable, Equatable {
    public var heartRate: UInt8
    public var interval: UInt16
    public var errorEstimate: UInt16
    public var flags: UInt8

    public init(heartRate: UInt8, interval: UInt16, errorEstimate: UInt16, flags: UInt8) {
      self.heartRate = heartRate
      self.interval = interval
      self.errorEstimate = errorEstimate
      self.flags = flags
    }

    init(parsing reader: inout ByteReader) throws(DecodeError) {
      heartRate = try reader.readUInt8()
      interval = try reader.readUInt16LE()
      errorEstimate = try reader.readUInt16LE()
      flags = try reader.readUInt8()
    }

    public var blocker: Bool { flags & 0x01 != 0 }
    public var skinContact: Bool { flags & 0x02 != 0 }
    public var skinContactSupported: Bool { flags & 0x04 != 0 }

    func writeFields(to fields: inout FieldList) {
      fields.beginObject("ppi", "PPI")
      fields.measure("hr_bpm", "Heart rate", heartRate, scale: 1, unit: "bpm")
      fields.measure("pp_interval_ms", "PP interval", interval, scale: 1, unit: "ms")
      fields.measure("error_estimate_ms", "Error estimate", errorEstimate, scale: 1, unit: "ms")
      fields.addVerbose("flags", "Flags", .unsigned(UInt64(flags), .hex(2)))
      fields.flag("blocker", "Blocker (invalid)", blocker)
      fields.flag("skin_contact", "Skin contact", skinContact)
      fields.flag("skin_contact_supported", "Skin contact supported", skinContactSupported)
      fields.end()
    }

    /// ", 61…63 bpm, PP 952…984 ms, 1 blocked".
    static func summarize(_ samples: [PPISample], into summary: inout SummaryLine) {
      func range(_ values: [Int], unit: Name) {
        guard let low = values.min(), let high = values.max() else { return }
        summary.append(.number(low))
        if high != low {
          summary.append(.text("…"))
          summary.append(.number(high))
        }
        summary.append(.text(unit))
      }
      summary.append(.text(", "))
      range(samples.map { Int($0.heartRate) }, unit: " bpm")
      summary.append(.text(", PP "))
      range(samples.map { Int($0.interval) }, unit: " ms")
      let blocked = samples.filter(\.blocker).count
      if blocked > 0 {
        summary.append(.text(", "))
        summary.append(.number(blocked))
        summary.append(.text(" blocked"))
      }
    }
  }

  /// `2025-01-01 00:00:00.153846153` for nanoseconds since 2000-01-01 00:00:00 UTC (PMD time
  /// stamps; no leap seconds, like the SDK).
  public static func utcText(nanosecondsSince2000 nanoseconds: UInt64) -> String {
    let seconds = Int64(nanoseconds / 1_000_000_000)
    let fraction = nanoseconds % 1_000_000_000
    // Days since 2000-03-01 (a 400-year cycle starts there), then the civil date.
    let days = seconds / 86_400 - 60
    let secondOfDay = seconds % 86_400
    let era = days >= 0 ? days / 146_097 : (days - 146_096) / 146_097
    let dayOfEra = days - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    let year = 2000 + yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    return ProfileSupport.padded(year, width: 4) + "-" + ProfileSupport.padded(month, width: 2) + "-" + ProfileSupport.padded(day, width: 2) + " "
      + ProfileSupport.padded(secondOfDay / 3600, width: 2) + ":" + ProfileSupport.padded(secondOfDay / 60 % 60, width: 2) + ":"
      + ProfileSupport.padded(secondOfDay % 60, width: 2) + "." + ProfileSupport.padded(fraction, width: 9)
  }
}

extension ProfileRegistry {
  /// This file's and PolarPMD.swift's decoders: adding one here registers it.
  static let polarPMD: [CharacteristicDecoder] = [
    PolarPMD.ControlPoint.decoder,
    PolarPMD.DataFrame.decoder,
  ]
}
