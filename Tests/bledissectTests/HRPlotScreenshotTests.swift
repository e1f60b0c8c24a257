import Foundation
import Testing

import BLETestSupport
@testable import bledissect

/// Chromium, for rendering SVG as a browser does (Scripts/setup --with-tools installs it).
let chromiumPath: String? = ["chromium", "chromium-browser", "google-chrome"].lazy.compactMap { which($0) }.first

/// `hr --svg` rendered to PNG by headless Chromium, and checked pixel by pixel: the plot is
/// drawn, and the marks and flag markers have their colours at the columns of the frames'
/// times. Skipped, saying why, when Chromium cannot be found.
@Suite(.enabled(if: chromiumPath != nil, "chromium is not installed (Scripts/setup --with-tools installs it)"))
struct HRPlotScreenshotTests {
  /// The document rendered at its own size, one CSS pixel a device pixel.
  static func screenshot(_ svg: String, width: Int, height: Int) throws -> PNGImage {
    let directory = NSTemporaryDirectory() + "bledissect-screenshot-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let document = directory + "/plot.svg"
    let picture = directory + "/plot.png"
    try svg.write(toFile: document, atomically: true, encoding: .utf8)
    var arguments = [
      "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-device-scale-factor=1",
      "--user-data-dir=\(directory)/profile", "--window-size=\(width),\(height)", "--screenshot=\(picture)",
      URL(fileURLWithPath: document).absoluteString,
    ]
    var program = try #require(chromiumPath)
    // A browser that hangs must not hang the suite.
    if let timeout = which("timeout") {
      arguments = ["120", program] + arguments
      program = timeout
    }
    let (status, _) = try runProgram(program, arguments)
    try #require(status == 0, "chromium exited with \(status)")
    return try PNGImage(contentsOf: picture)
  }

  @Test func marksAndFlaggedValuesShowAtTheirTimes() throws {
    let capture = try HRPlotTests.strapSessionWithSpikes()
    defer { unlink(capture) }
    let svg = try HRPlotTests.plot(capture)
    let plot = try #require(PlotElements(svg))
    let root = try #require(plot.all("svg").first)
    let (width, height) = (Int(try #require(root.number("width"))), Int(try #require(root.number("height"))))
    let image = try Self.screenshot(svg, width: width, height: height)
    #expect(image.width == width && image.height == height)

    let frames = plot.all("rect", class: "frame")
    try #require(frames.count == 2)
    func box(_ frame: PlotElements.Element) throws -> (left: Double, top: Double, right: Double, bottom: Double) {
      let (x, y) = (try #require(frame.number("x")), try #require(frame.number("y")))
      return (x, y, x + (try #require(frame.number("width"))), y + (try #require(frame.number("height"))))
    }
    let heartRate = try box(frames[0])
    let rr = try box(frames[1])
    let x = try plot.timeToX()
    let insideRows = Int(heartRate.top) + 2...Int(heartRate.bottom) - 2
    func columns(around x: Double, by spread: Double = 1) -> ClosedRange<Int> { Int((x - spread).rounded(.down))...Int((x + spread).rounded(.up)) }

    // The plot is drawn: the heart-rate line's blue in most columns from the first measurement
    // (0.33 s) to the last (20.35 s).
    let lineBlue = PNGImage.Pixel(hex: "#1f5fa8")
    let first = Int(x(0.332579).rounded(.up)) + 2
    let last = Int(x(20.356).rounded(.down)) - 2
    let blueColumns = (first...last).filter { image.count(lineBlue, columns: $0...$0, rows: insideRows, tolerance: 60) > 0 }.count
    #expect(Double(blueColumns) >= 0.9 * Double(last - first + 1), "\(blueColumns) of \(last - first + 1) columns")

    // The connection (frame 39) and the disconnection (frame 160): their colours down the whole
    // heart-rate plot at those columns, and nowhere near the middle of the session.
    for (colour, time) in [("#00897b", 0.323431), ("#b71c1c", 20.568189)] {
      let rows = image.rowsContaining(PNGImage.Pixel(hex: colour), columns: columns(around: x(time)), rows: insideRows)
      #expect(rows >= insideRows.count * 95 / 100, "\(colour) at \(time) s: \(rows) of \(insideRows.count) rows")
      #expect(image.count(PNGImage.Pixel(hex: colour), columns: columns(around: x(10), by: 20), rows: insideRows) == 0)
    }
    // The connection's label ("connected · MTU 247 · …") starts just right of its line, above the plot.
    let labelRows = Int(heartRate.top) - 30...Int(heartRate.top) - 2
    #expect(image.count(PNGImage.Pixel(hex: "#00897b"), columns: Int(x(0.323431)) + 3...Int(x(0.323431)) + 70, rows: labelRows, tolerance: 80) >= 20)

    // The 300 bpm of frame 135: its orange triangle at the top edge of the heart-rate plot.
    let triangle = image.count(
      PNGImage.Pixel(hex: "#e65100"), columns: columns(around: x(5.340730), by: 5), rows: Int(heartRate.top) + 1...Int(heartRate.top) + 13)
    #expect(triangle >= 20, "\(triangle)")
    // Frame 134's 78 bpm, inconsistent with its RR intervals: a pink cross at 78 bpm, not on the line.
    let crossRows = Int(heartRate.top)...Int(heartRate.bottom)
    let cross = image.count(PNGImage.Pixel(hex: "#d81b60"), columns: columns(around: x(4.339118), by: 5), rows: crossRows)
    #expect(cross >= 10, "\(cross)")
    // Its 176.8 ms interval, ending one 766.6 ms interval before the frame: an amber diamond at
    // the bottom edge of the RR plot.
    let diamond = image.count(
      PNGImage.Pixel(hex: "#ffb300"), columns: columns(around: x(4.339118 - 0.7666015625), by: 6), rows: Int(rr.bottom) - 14...Int(rr.bottom) - 1)
    #expect(diamond >= 10, "\(diamond)")
    // No such markers anywhere else in the heart-rate plot: the rest of the session is plausible.
    #expect(image.count(PNGImage.Pixel(hex: "#e65100"), columns: Int(x(8))...Int(x(20)), rows: crossRows) == 0)
  }
}
