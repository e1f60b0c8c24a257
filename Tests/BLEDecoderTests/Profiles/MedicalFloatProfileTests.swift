import BLECore
import Testing

@testable import BLEDecoder

@Suite struct MedicalFloatProfileTests {
  @Test func sfloatNumbers() {
    // SFLOAT: exponent in the high nibble (signed), mantissa in the low 12 bits (signed).
    #expect(MedicalFloat(sfloat: 0x0078).value == 120)  // 120 × 10^0
    #expect(MedicalFloat(sfloat: 0xF3A5).value == 93.3)  // 933 × 10^-1
    #expect(MedicalFloat(sfloat: 0xF3A5).places == 1)
    #expect(MedicalFloat(sfloat: 0x2001).value == 100)  // 1 × 10^2
    #expect(MedicalFloat(sfloat: 0x0FFF).value == -1)  // mantissa −1
    #expect(MedicalFloat(sfloat: 0xEF9C).value == -1)  // −100 × 10^-2
    #expect(MedicalFloat(sfloat: 0x8001).exponent == -8)
    #expect(MedicalFloat(sfloat: 0x7001).exponent == 7)
    #expect(MedicalFloat(sfloat: 0x0000).value == 0)
    #expect(MedicalFloat(sfloat: 0xF3A5).description == "93.3")
  }

  @Test func sfloatSpecialValues() {
    #expect(MedicalFloat(sfloat: 0x07FF).special == .nan)
    #expect(MedicalFloat(sfloat: 0x0800).special == .nres)
    #expect(MedicalFloat(sfloat: 0x07FE).special == .positiveInfinity)
    #expect(MedicalFloat(sfloat: 0x0802).special == .negativeInfinity)
    #expect(MedicalFloat(sfloat: 0x0801).special == .reserved)
    #expect(MedicalFloat(sfloat: 0x07FF).value.isNaN)
    #expect(MedicalFloat(sfloat: 0x0800).value.isNaN)
    #expect(MedicalFloat(sfloat: 0x07FE).value == .infinity)
    #expect(MedicalFloat(sfloat: 0x0802).value == -.infinity)
    // The same mantissas with a non-zero exponent are ordinary numbers.
    #expect(MedicalFloat(sfloat: 0x17FF).special == nil)
    #expect(MedicalFloat(sfloat: 0x17FF).value == 20470)
    #expect(MedicalFloat(sfloat: 0x07FD).special == nil)
  }

  @Test func floatNumbersAndSpecials() {
    // FLOAT: exponent in the high byte (signed), mantissa in the low 24 bits (signed).
    #expect(MedicalFloat(float: 0xFF00_016E).value == 36.6)  // 366 × 10^-1
    #expect(MedicalFloat(float: 0xFF00_016E).places == 1)
    #expect(MedicalFloat(float: 0x00FF_FFFF).value == -1)
    #expect(MedicalFloat(float: 0x0200_0003).value == 300)
    #expect(MedicalFloat(float: 0xFD00_0001).value == 0.001)
    #expect(MedicalFloat(float: 0x007F_FFFF).special == .nan)
    #expect(MedicalFloat(float: 0x0080_0000).special == .nres)
    #expect(MedicalFloat(float: 0x007F_FFFE).special == .positiveInfinity)
    #expect(MedicalFloat(float: 0x0080_0002).special == .negativeInfinity)
    #expect(MedicalFloat(float: 0x0080_0001).special == .reserved)
    #expect(MedicalFloat(float: 0x0080_0001).description == "reserved")
  }

  @Test func fieldsForSpecialValues() {
    var fields = FieldList()
    MedicalFloat(sfloat: 0x07FF).add("x", "X", unit: "mmHg", to: &fields)
    MedicalFloat(sfloat: 0xF3A5).add("y", "Y", unit: "mmHg", to: &fields)
    #expect(fields.word("x") == "nan")
    #expect(fields.real("y") == 93.3)
    #expect(fields.unit("y") == "mmHg")
  }
}
