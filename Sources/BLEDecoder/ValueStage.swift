import BLECore

/// The second stage of dissection, for the attribute a frame is about: its typed value, then
/// its `gatt` and `decoded` groups (the frame's last fields), wherever the engine runs it.
/// Pure: it needs the frame and the registry only, so it can run on another thread than the
/// dissector's. `Dissector.dissect` runs it; `Dissector.decodeLayers` leaves it.
///
/// The groups are a presentation of the facts: they are written as far as the frame's field
/// list keeps them (its `detail`, the consumer's), and the facts are complete either way.
public enum ValueStage {
  /// Decodes the value the frame left and writes its groups; nothing to do for a frame that
  /// left none.
  public static func complete(_ frame: inout DissectedFrame, registry: DecoderRegistry) {
    guard let trailing = frame.trailing else { return }
    frame.trailing = nil
    // A value there is (a Read Request has none) is decoded, unless it was already.
    let decoder = trailing.raw == nil ? nil : trailing.decoder
    complete(trailing.index, decoder: decoder, raw: trailing.valueDecoded ? nil : trailing.raw, &frame, registry)
  }

  /// Decodes the raw value of attribute `index` into its fact (when `raw` is given), then
  /// appends its `gatt` and `decoded` groups as far as the field list keeps them (a group it
  /// would drop is not built).
  static func complete(_ index: Int, decoder: Int?, raw: Range<Int>?, _ frame: inout DissectedFrame, _ registry: DecoderRegistry) {
    guard let decoderIndex = decoder else {
      if frame.fields.keepsGroup(verbose: true) { writeGATTGroup(index, &frame) }
      return
    }
    let decoder = registry[decoder: decoderIndex]
    let context = frame.storedAttributes[index].valueContext
    if let raw {
      // The fact is changed in place (copying it would copy its value), beside the fields.
      frame.valueBytes.withBytes(raw) { view in
        GATTDescription.decodeValue(
          decoder, registry, view, &frame.storedAttributes[index], &frame.diagnostics, &frame.malformed,
          context: context)
      }
    }
    if frame.fields.keepsGroup(verbose: true) { writeGATTGroup(index, &frame) }
    if frame.fields.keepsGroup(verbose: decoder.summarySaysItAll) {
      GATTDescription.writeDecodedGroup(decoder, &frame.storedAttributes[index], &frame.fields, context: context)
    }
  }

  /// The `gatt` group of attribute `index`, with the map its meaning came from.
  static func writeGATTGroup(_ index: Int, _ frame: inout DissectedFrame) {
    guard let meaning = frame.storedAttributes[index].meaning else { return }
    let provenance = frame.trailingProvenance.flatMap { $0.source == meaning.source ? $0 : nil }
    GATTDescription.writeFields(meaning, provenance: provenance, &frame.fields)
  }
}
