import BLECore
extension HCICommand {
  static func decodeParameters(opcode: UInt16, _ p: inout ByteReader, into fields: inout FieldList, summary: inout String, context: inout Context) throws(DecodeError) -> Bool { false }
  static func decodeReturnParameters(opcode: UInt16, _ p: inout ByteReader, into fields: inout FieldList, handle: inout UInt16?) throws(DecodeError) -> Bool { false }
}
