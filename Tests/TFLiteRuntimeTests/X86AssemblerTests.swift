import XCTest

import TFLiteLinearAlgebra
@testable import TFLiteRuntime

/// The x86-64 encoder of the generated kernels against NASM (`X86EncodingTable.swift`, made by
/// `Scripts/make_x86_encoding_table.py`): every instruction form, including AVX-512 forms and
/// registers this machine may not be able to run.
final class X86AssemblerTests: XCTestCase {
  /// Each case's bytes equal NASM's.
  func testEncodingsMatchNASM() {
    XCTAssertGreaterThan(x86EncodingCases.count, 300)
    for entry in x86EncodingCases {
      var assembler = X86Assembler()
      entry.encode(&assembler)
      let actual = assembler.finishedCode()
      XCTAssertEqual(actual, entry.expected, "\(entry.source): got \(hex(actual)), NASM \(hex(entry.expected))")
    }
  }

  private func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
      .joined(separator: " ")
  }
}
