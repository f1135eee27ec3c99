import TFLiteFormat
import XCTest

/// Reads FlexBuffers written by the reference Python encoder (see Scripts/make_flexbuffer_fixtures.py).
final class FlexBufferPythonFixtureTests: XCTestCase {
  private func fixture(_ name: String) throws -> FlexBufferReference {
    let fixture = try XCTUnwrap(flexBufferPythonFixtures.first { $0.name == name }, "no fixture \(name)")
    return try FlexBufferReference(fixture.bytes)
  }

  func testEveryFixtureRendersTheJSONOfTheEncodedValue() throws {
    XCTAssertEqual(flexBufferPythonFixtures.count, 17)
    for fixture in flexBufferPythonFixtures {
      let root = try FlexBufferReference(fixture.bytes)
      XCTAssertEqual(root.description, fixture.json, fixture.name)
    }
  }

  func testDetectionPostProcessOptionsAsTheRuntimeReadsThem() throws {
    let options = try fixture("detection_postprocess_options")
    XCTAssertEqual(options.type, .map)
    XCTAssertEqual(options["max_detections"]?.asInt, 10)
    XCTAssertEqual(options["max_classes_per_detection"]?.asInt, 1)
    XCTAssertEqual(options["detections_per_class"]?.asInt, 100)
    XCTAssertEqual(options["use_regular_nms"]?.asBool, false)
    XCTAssertEqual(options["nms_score_threshold"]?.asDouble.map(Float.init), 0.3)
    XCTAssertEqual(options["nms_iou_threshold"]?.asDouble.map(Float.init), 0.6)
    XCTAssertEqual(options["num_classes"]?.asInt, 90)
    XCTAssertEqual(options["y_scale"]?.asDouble, 10)
    XCTAssertEqual(options["x_scale"]?.asDouble, 10)
    XCTAssertEqual(options["h_scale"]?.asDouble, 5)
    XCTAssertEqual(options["w_scale"]?.asDouble, 5)
    XCTAssertNil(options["missing_key"])
  }

  func testTypesChosenByTheEncoder() throws {
    let typed = try fixture("typed_vectors")
    XCTAssertEqual(typed["ints8"]?.type, .vectorInt)
    XCTAssertEqual(typed["uints16"]?.type, .vectorUInt)
    XCTAssertEqual(typed["floats32"]?.type, .vectorFloat)
    XCTAssertEqual(typed["bools"]?.type, .vectorBool)
    XCTAssertEqual(typed["keys"]?.type, .vectorKey)
    let fixed = try XCTUnwrap(fixture("fixed_vectors").asVector)
    XCTAssertEqual(fixed.map(\.type), [.vectorInt2, .vectorUInt3, .vectorFloat4, .vectorInt4, .vectorFloat2, .vectorUInt3])
    let indirect = try XCTUnwrap(fixture("indirect_values").asVector)
    XCTAssertEqual(
      indirect.map(\.type),
      [.indirectInt, .indirectInt, .indirectInt, .indirectUInt, .indirectUInt, .indirectFloat, .indirectFloat, .int])
    let gold = try fixture("gold")
    XCTAssertEqual(gold["vec"]?[3]?.type, .blob)
    XCTAssertEqual(gold["bool"]?.type, .bool)
    XCTAssertEqual(try fixture("scalars")[0]?.isNull, true)
  }

  func testLargeMapLookupAndWideOffsets() throws {
    let map = try fixture("large_map")
    XCTAssertEqual(map.asMap?.count, 300)
    for index in stride(from: 0, to: 300, by: 7) {
      let key = "key_" + String(repeating: "0", count: 3 - String(index).count) + String(index)
      XCTAssertEqual(map[key]?.asInt, index * 1000, key)
    }
    XCTAssertNil(map["key_300"])
    let blob = try fixture("large_blob")
    XCTAssertEqual(blob[0]?.asBlob, (0..<512).map { UInt8($0 % 256) })
  }
}
