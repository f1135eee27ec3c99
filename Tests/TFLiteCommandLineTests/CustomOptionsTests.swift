import XCTest

@testable import TFLiteCommandLine
import TFLiteFormat

final class CustomOptionsTests: XCTestCase {
  /// Decodes hand-made bytes the way `tflite inspect` does for an operator.
  private func decode(_ bytes: [UInt8], format: CustomOptionsFormat = .flexbuffers) -> CustomOptions? {
    bytes.withUnsafeBytes { CustomOptions($0, format: format) }
  }

  func testFlexBufferOptionsBecomeJSON() {
    // The FlexBuffer string "hi": length 2, the bytes, NUL; root slot = offset 3 back, type STRING, width 1.
    XCTAssertEqual(decode([2, 104, 105, 0, 3, 20, 1]), .flexBuffer(json: "\"hi\""))
    XCTAssertEqual(JSONValue.object([("custom_options", .raw("\"hi\""))]).rendered(), "{\n  \"custom_options\": \"hi\"\n}\n")
  }

  func testUndecodableOptionsKeepTheirSizeAndReason() throws {
    guard case .undecodable(let reason, let count)? = decode([0xFF, 0xFF, 9]) else {
      return XCTFail("bytes that are no FlexBuffer must not decode")
    }
    XCTAssertEqual(count, 3)
    XCTAssertFalse(reason.isEmpty)
    XCTAssertEqual(decode([1, 2], format: CustomOptionsFormat(rawValue: 7)), .undecodable(reason: "unknown custom options format UNKNOWN(7)", byteCount: 2))
    XCTAssertNil(decode([]))
  }
}
