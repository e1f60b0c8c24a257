extension OutputBuffer {
  /// Lends the bytes appended since `start` (an earlier `count`) and not yet flushed, without
  /// copying them: checks of what a renderer wrote (fuzz targets, tests).
  package func withAppendedBytes<Result>(since start: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
    let from = min(max(start, 0), count)
    return body(UnsafeBufferPointer(start: base + from, count: count - from))
  }
}
