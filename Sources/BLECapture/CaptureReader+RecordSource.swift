import BLECore

extension CaptureReader {
  /// `next(into:)` with its error in the words every record source uses. The conversion is on
  /// the failure path only: a record read costs what `next(into:)` costs.
  public func nextRecord(into record: inout CaptureRecord) throws(SourceFailure) -> Bool {
    do {
      return try next(into: &record)
    } catch {
      throw error.sourceFailure
    }
  }
}

extension CaptureError {
  /// This error as a frame stream reports it: the same message and exit status.
  public var sourceFailure: SourceFailure { SourceFailure(message: message, exitStatus: exitStatus, cause: self) }
}
