import Foundation
import XCTest

@testable import TFLiteCommandLine

final class JSONValueTests: XCTestCase {
  func testRenderedTextParsesBackWithFoundation() throws {
    let value = JSONValue.object([
      ("text", .string("quote \" backslash \\ newline \n tab \t bell \u{7} é")),
      ("numbers", .array([.integer(-3), .unsigned(UInt64.max), .number(0.1), .float(0.0033019031), .number(2)])),
      ("nested", .array([.object([("empty", .object([])), ("list", .array([])), ("null", .null), ("flag", .bool(true))])])),
    ])
    let parsed = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(value.rendered().utf8)) as? [String: Any])
    XCTAssertEqual(parsed["text"] as? String, "quote \" backslash \\ newline \n tab \t bell \u{7} é")
    let numbers = try XCTUnwrap(parsed["numbers"] as? [NSNumber])
    XCTAssertEqual(numbers[0].intValue, -3)
    XCTAssertEqual(numbers[1].uint64Value, UInt64.max)
    XCTAssertEqual(numbers[2].doubleValue, 0.1)
    XCTAssertEqual(numbers[3].floatValue, 0.0033019031)
    XCTAssertTrue(value.rendered().contains("0.0033019031, 2]"), value.rendered())
    let nested = try XCTUnwrap((parsed["nested"] as? [[String: Any]])?.first)
    XCTAssertTrue(nested["null"] is NSNull)
    XCTAssertEqual(nested["flag"] as? Bool, true)
  }

  func testNonFiniteNumbersBecomeStrings() {
    XCTAssertEqual(JSONValue.array([.number(.nan), .float(.infinity), .number(-.infinity)]).rendered(), "[\"NaN\", \"Infinity\", \"-Infinity\"]\n")
  }

  func testObjectKeysKeepTheirOrder() {
    XCTAssertEqual(JSONValue.object([("b", .integer(1)), ("a", .integer(2))]).rendered(), "{\n  \"b\": 1,\n  \"a\": 2\n}\n")
  }
}
