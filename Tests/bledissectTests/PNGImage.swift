import Foundation

@testable import BLECapture

/// A PNG file's pixels, for checking screenshots: 8-bit greyscale, RGB or RGBA (with or without
/// alpha, grey or colour), not interlaced, which is what Chromium writes. Inflated with the zlib
/// the project already links (BLECapture's `Inflater`).
struct PNGImage {
  struct Pixel: Equatable {
    var red: UInt8
    var green: UInt8
    var blue: UInt8

    /// Euclidean distance in RGB.
    func distance(to other: Pixel) -> Double {
      let (r, g, b) = (Double(red) - Double(other.red), Double(green) - Double(other.green), Double(blue) - Double(other.blue))
      return (r * r + g * g + b * b).squareRoot()
    }

    /// "#rrggbb".
    init(hex: String) {
      let value = UInt32(hex.dropFirst(), radix: 16) ?? 0
      red = UInt8(value >> 16 & 0xFF)
      green = UInt8(value >> 8 & 0xFF)
      blue = UInt8(value & 0xFF)
    }

    init(red: UInt8, green: UInt8, blue: UInt8) {
      self.red = red
      self.green = green
      self.blue = blue
    }
  }

  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  let width: Int
  let height: Int
  /// Bytes per pixel in `rows`.
  private let channels: Int
  /// Unfiltered scanlines, one after another.
  private let rows: [UInt8]

  init(contentsOf path: String) throws {
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    guard bytes.count > 8, bytes[0..<8].elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else {
      throw Failure(description: "\(path) is not a PNG file")
    }
    func uint32(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
    var offset = 8
    var header: ArraySlice<UInt8> = []
    var compressed: [UInt8] = []
    while offset + 12 <= bytes.count {
      let length = uint32(offset)
      let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
      guard offset + 12 + length <= bytes.count else { throw Failure(description: "truncated \(type) chunk") }
      let data = bytes[offset + 8..<offset + 8 + length]
      if type == "IHDR" { header = data }
      if type == "IDAT" { compressed += data }
      offset += 12 + length
      if type == "IEND" { break }
    }
    guard header.count == 13 else { throw Failure(description: "no IHDR chunk") }
    let start = header.startIndex
    width = uint32(start)
    height = uint32(start + 4)
    let (depth, colour, interlace) = (header[start + 8], header[start + 9], header[start + 12])
    guard depth == 8, interlace == 0, let channels = [0: 1, 2: 3, 4: 2, 6: 4][Int(colour)] else {
      throw Failure(description: "unsupported PNG: depth \(depth), colour type \(colour), interlace \(interlace)")
    }
    self.channels = channels
    let stride = width * channels
    let raw = try Inflater.inflateAll(compressed[...], wrapper: .zlib, limit: (stride + 1) * height + 1)
    guard raw.count == (stride + 1) * height else { throw Failure(description: "\(raw.count) bytes of pixels for \(width)×\(height)") }
    // Undo each scanline's filter (PNG §9): none, sub, up, average, Paeth.
    var rows = [UInt8](repeating: 0, count: stride * height)
    for y in 0..<height {
      let filter = raw[y * (stride + 1)]
      for x in 0..<stride {
        let value = raw[y * (stride + 1) + 1 + x]
        let left = x >= channels ? Int(rows[y * stride + x - channels]) : 0
        let up = y > 0 ? Int(rows[(y - 1) * stride + x]) : 0
        let upLeft = x >= channels && y > 0 ? Int(rows[(y - 1) * stride + x - channels]) : 0
        let predicted: Int
        switch filter {
        case 0: predicted = 0
        case 1: predicted = left
        case 2: predicted = up
        case 3: predicted = (left + up) / 2
        case 4:
          let estimate = left + up - upLeft
          let (a, b, c) = (abs(estimate - left), abs(estimate - up), abs(estimate - upLeft))
          predicted = a <= b && a <= c ? left : (b <= c ? up : upLeft)
        default: throw Failure(description: "unknown filter \(filter) on row \(y)")
        }
        rows[y * stride + x] = UInt8(truncatingIfNeeded: Int(value) + predicted)
      }
    }
    self.rows = rows
  }

  /// The pixel at column `x`, row `y` (alpha ignored: a screenshot is opaque).
  subscript(x: Int, y: Int) -> Pixel {
    let at = (y * width + x) * channels
    if channels < 3 { return Pixel(red: rows[at], green: rows[at], blue: rows[at]) }
    return Pixel(red: rows[at], green: rows[at + 1], blue: rows[at + 2])
  }

  /// How many of `rows` have a pixel within `tolerance` of `colour` in one of `columns`.
  func rowsContaining(_ colour: Pixel, columns: ClosedRange<Int>, rows: ClosedRange<Int>, tolerance: Double = 40) -> Int {
    rows.filter { count(colour, columns: columns, rows: $0...$0, tolerance: tolerance) > 0 }.count
  }

  /// How many pixels of the rectangle are within `tolerance` of `colour`.
  func count(_ colour: Pixel, columns: ClosedRange<Int>, rows: ClosedRange<Int>, tolerance: Double = 40) -> Int {
    var count = 0
    for y in rows where y >= 0 && y < height {
      for x in columns where x >= 0 && x < width && self[x, y].distance(to: colour) <= tolerance { count += 1 }
    }
    return count
  }
}
