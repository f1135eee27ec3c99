import TFLiteFormat
import XCTest

final class FlexBufferReaderTests: XCTestCase {
  private let widths = [1, 2, 4, 8]

  // MARK: - Bytes written by hand from the format description

  func testRootIntegerFromTheFormatDescription() throws {
    let root = try FlexBufferReference([13, 4, 1])
    XCTAssertEqual(root.type, .int)
    XCTAssertEqual(root.asInt, 13)
  }

  func testMapFromTheFormatDescription() throws {
    // {bar: 14, foo: 13}: keys, keys vector, map prefix, values, types, then the root.
    let bytes: [UInt8] = [
      98, 97, 114, 0, 102, 111, 111, 0,  // "bar\0" "foo\0"
      2, 9, 6,  // keys vector: size, offsets back to the keys
      2, 1, 2,  // offset to the keys vector, its width, map size
      14, 13, 4, 4,  // values and their types (int, 8-bit)
      4, 36, 1,  // root: offset back to the map, type map/8-bit, width 1
    ]
    let root = try FlexBufferReference(bytes)
    XCTAssertEqual(root.type, .map)
    XCTAssertEqual(root["bar"]?.asInt, 14)
    XCTAssertEqual(root["foo"]?.asInt, 13)
    XCTAssertNil(root["baz"])
    XCTAssertEqual(root.asMap?.keys, ["bar", "foo"])
    XCTAssertEqual(root.description, #"{"bar": 14, "foo": 13}"#)
  }

  // MARK: - Scalars of every width

  func testIntegersOfEveryWidth() throws {
    let signed: [Int64] = [0, -1, 127, -128, 300, -32768, 70_000, -2_000_000_000, Int64.max, Int64.min]
    for number in signed {
      for minimum in widths {
        let root = try FlexBufferReference(FlexBufferTestEncoder.encode(.int(number), minimumWidth: minimum))
        XCTAssertEqual(root.type, .int)
        XCTAssertEqual(root.asInt64, number, "int \(number) at width ≥ \(minimum)")
        XCTAssertEqual(root.asDouble, Double(number))
        XCTAssertEqual(root.description, String(number))
      }
    }
    let unsigned: [UInt64] = [0, 255, 256, 65_535, 65_536, UInt64(UInt32.max), UInt64.max]
    for number in unsigned {
      for minimum in widths {
        let root = try FlexBufferReference(FlexBufferTestEncoder.encode(.uint(number), minimumWidth: minimum))
        XCTAssertEqual(root.type, .uint)
        XCTAssertEqual(root.asUInt64, number, "uint \(number) at width ≥ \(minimum)")
        XCTAssertEqual(root.asInt64, Int64(exactly: number))
        XCTAssertEqual(root.description, String(number))
      }
    }
  }

  func testSignConversionsBetweenIntAndUInt() throws {
    let negative = try FlexBufferReference(FlexBufferTestEncoder.encode(.int(-5)))
    XCTAssertNil(negative.asUInt64)
    XCTAssertEqual(negative.asBool, true)
    let huge = try FlexBufferReference(FlexBufferTestEncoder.encode(.uint(UInt64.max)))
    XCTAssertNil(huge.asInt64)
    XCTAssertNil(huge.asInt)
    let zero = try FlexBufferReference(FlexBufferTestEncoder.encode(.uint(0)))
    XCTAssertEqual(zero.asBool, false)
  }

  func testFloatsOfWidths16To64() throws {
    let cases: [(Double, Int, String)] = [
      (0.5, 2, "0.5"), (-2.25, 2, "-2.25"), (65504, 2, "65504.0"),
      (0.3, 4, "0.3"), (1e-8, 4, "1e-08"), (Double(Float.greatestFiniteMagnitude), 4, "3.4028235e+38"),
      (0.1, 8, "0.1"), (1e300, 8, "1e+300"),
    ]
    for (number, width, text) in cases {
      let root = try FlexBufferReference(FlexBufferTestEncoder.encode(.float(number, width: width)))
      XCTAssertEqual(root.type, .float)
      let expected = width == 8 ? number : Double(Float(number))
      XCTAssertEqual(root.asDouble, expected, "float \(number) in \(width) bytes")
      XCTAssertEqual(root.description, text)
      XCTAssertNil(root.asInt64)
    }
  }

  func testNonFiniteFloatsRenderAsQuotedNames() throws {
    XCTAssertEqual(try FlexBufferReference(FlexBufferTestEncoder.encode(.float(.nan, width: 4))).description, #""NaN""#)
    XCTAssertEqual(try FlexBufferReference(FlexBufferTestEncoder.encode(.float(.infinity, width: 8))).description, #""Infinity""#)
    XCTAssertEqual(try FlexBufferReference(FlexBufferTestEncoder.encode(.float(-.infinity, width: 2))).description, #""-Infinity""#)
  }

  func testBoolAndNull() throws {
    for minimum in widths {
      let yes = try FlexBufferReference(FlexBufferTestEncoder.encode(.bool(true), minimumWidth: minimum))
      XCTAssertEqual(yes.type, .bool)
      XCTAssertEqual(yes.asBool, true)
      XCTAssertNil(yes.asInt64)
      XCTAssertEqual(yes.description, "true")
      let no = try FlexBufferReference(FlexBufferTestEncoder.encode(.bool(false), minimumWidth: minimum))
      XCTAssertEqual(no.asBool, false)
      let null = try FlexBufferReference(FlexBufferTestEncoder.encode(.null, minimumWidth: minimum))
      XCTAssertTrue(null.isNull)
      XCTAssertNil(null.asBool)
      XCTAssertNil(null.asString)
      XCTAssertEqual(null.description, "null")
    }
  }

  func testIndirectScalarsOfEveryWidth() throws {
    for width in widths {
      let int = try FlexBufferReference(FlexBufferTestEncoder.encode(.indirectInt(-100, width: width)))
      XCTAssertEqual(int.type, .indirectInt)
      XCTAssertEqual(int.asInt64, -100)
      XCTAssertEqual(int.description, "-100")
      let uint = try FlexBufferReference(FlexBufferTestEncoder.encode(.indirectUInt(200, width: width)))
      XCTAssertEqual(uint.type, .indirectUInt)
      XCTAssertEqual(uint.asUInt64, 200)
      XCTAssertEqual(uint.asBool, true)
      guard width >= 2 else { continue }
      let float = try FlexBufferReference(FlexBufferTestEncoder.encode(.indirectFloat(4.5, width: width)))
      XCTAssertEqual(float.type, .indirectFloat)
      XCTAssertEqual(float.asDouble, 4.5)
      XCTAssertEqual(float.description, "4.5")
    }
  }

  // MARK: - Strings, keys, blobs

  func testStringsKeysAndBlobs() throws {
    for minimum in widths {
      let string = try FlexBufferReference(FlexBufferTestEncoder.encode(.string("Grüße \"q\"\n"), minimumWidth: minimum))
      XCTAssertEqual(string.type, .string)
      XCTAssertEqual(string.asString, "Grüße \"q\"\n")
      XCTAssertEqual(string.description, #""Grüße \"q\"\n""#)
      XCTAssertNil(string.asBlob)
      let key = try FlexBufferReference(FlexBufferTestEncoder.encode(.key("a_key"), minimumWidth: minimum))
      XCTAssertEqual(key.type, .key)
      XCTAssertEqual(key.asString, "a_key")
      let blob = try FlexBufferReference(FlexBufferTestEncoder.encode(.blob([0, 1, 255, 0]), minimumWidth: minimum))
      XCTAssertEqual(blob.type, .blob)
      XCTAssertEqual(blob.asBlob, [0, 1, 255, 0])
      XCTAssertNil(blob.asString)
      XCTAssertEqual(blob.description, "[0, 1, 255, 0]")
    }
    XCTAssertEqual(try FlexBufferReference(FlexBufferTestEncoder.encode(.string(""))).asString, "")
    XCTAssertEqual(try FlexBufferReference(FlexBufferTestEncoder.encode(.blob([]))).asBlob, [])
  }

  func testLongStringNeedsAWiderSizeField() throws {
    let text = String(repeating: "xyz", count: 30_000)
    let root = try FlexBufferReference(FlexBufferTestEncoder.encode(.vector([.string(text), .int(1)])))
    XCTAssertEqual(root[0]?.asString, text)
    XCTAssertEqual(root[1]?.asInt, 1)
  }

  func testControlCharactersAreEscapedInJSON() throws {
    let root = try FlexBufferReference(FlexBufferTestEncoder.encode(.string("a\u{1}b\tc\\")))
    XCTAssertEqual(root.description, #""a\u0001b\tc\\""#)
  }

  // MARK: - Vectors

  func testUntypedVectorWithMixedElements() throws {
    let value = FlexValue.vector([
      .int(-100), .string("Fred"), .indirectFloat(4.0, width: 4), .blob([77]), .bool(false), .float(4.0, width: 4), .null,
      .uint(7),
    ])
    for minimum in widths {
      let root = try FlexBufferReference(FlexBufferTestEncoder.encode(value, minimumWidth: minimum))
      XCTAssertEqual(root.type, .vector)
      let vector = try XCTUnwrap(root.asVector)
      XCTAssertEqual(vector.count, 8)
      XCTAssertEqual(vector.map(\.type), [.int, .string, .indirectFloat, .blob, .bool, .float, .null, .uint])
      XCTAssertEqual(vector[0].asInt, -100)
      XCTAssertEqual(vector[1].asString, "Fred")
      XCTAssertEqual(vector[2].asDouble, 4)
      XCTAssertEqual(vector[3].asBlob, [77])
      XCTAssertEqual(vector[4].asBool, false)
      XCTAssertEqual(root.description, #"[-100, "Fred", 4.0, [77], false, 4.0, null, 7]"#)
      XCTAssertNil(root[8])
      XCTAssertNil(root[-1])
      XCTAssertNil(vector.element(at: 8))
      XCTAssertNil(root.asMap)
      XCTAssertNil(root["x"])
    }
  }

  func testEmptyContainers() throws {
    XCTAssertEqual(try FlexBufferReference(FlexBufferTestEncoder.encode(.vector([]))).asVector?.count, 0)
    XCTAssertEqual(try FlexBufferReference(FlexBufferTestEncoder.encode(.vector([]))).description, "[]")
    let map = try FlexBufferReference(FlexBufferTestEncoder.encode(.map([])))
    XCTAssertEqual(map.asMap?.count, 0)
    XCTAssertNil(map["anything"])
    XCTAssertEqual(map.description, "{}")
    XCTAssertEqual(try FlexBufferReference(FlexBufferTestEncoder.encode(.typedVector(.int, []))).asVector?.count, 0)
  }

  func testTypedVectorsOfEveryElementTypeAndWidth() throws {
    for minimum in widths {
      let ints = try FlexBufferReference(
        FlexBufferTestEncoder.encode(.typedVector(.int, [.int(1), .int(-2), .int(300)]), minimumWidth: minimum))
      XCTAssertEqual(ints.type, .vectorInt)
      XCTAssertEqual(ints.asVector?.compactMap(\.asInt64), [1, -2, 300])
      XCTAssertEqual(ints.description, "[1, -2, 300]")

      let uints = try FlexBufferReference(
        FlexBufferTestEncoder.encode(.typedVector(.uint, [.uint(1), .uint(70_000)]), minimumWidth: minimum))
      XCTAssertEqual(uints.type, .vectorUInt)
      XCTAssertEqual(uints.asVector?.compactMap(\.asUInt64), [1, 70_000])

      let bools = try FlexBufferReference(
        FlexBufferTestEncoder.encode(.typedVector(.bool, [.bool(true), .bool(false), .bool(true)]), minimumWidth: minimum))
      XCTAssertEqual(bools.type, .vectorBool)
      XCTAssertEqual(bools.asVector?.compactMap(\.asBool), [true, false, true])
      XCTAssertEqual(bools.description, "[true, false, true]")

      let keys = try FlexBufferReference(
        FlexBufferTestEncoder.encode(.typedVector(.key, [.key("b"), .key("a")]), minimumWidth: minimum))
      XCTAssertEqual(keys.type, .vectorKey)
      XCTAssertEqual(keys.asVector?.compactMap(\.asString), ["b", "a"])
      XCTAssertEqual(keys.description, #"["b", "a"]"#)

      let strings = try FlexBufferReference(
        FlexBufferTestEncoder.encode(.deprecatedStringVector(["one", "three"]), minimumWidth: minimum))
      XCTAssertEqual(strings.type, .vectorStringDeprecated)
      XCTAssertEqual(strings.asVector?.compactMap(\.asString), ["one", "three"])
    }
    for minimum in [2, 4, 8] {
      let floats = try FlexBufferReference(
        FlexBufferTestEncoder.encode(.typedVector(.float, [.float(0.5, width: 2), .float(-1.5, width: 2)]), minimumWidth: minimum))
      XCTAssertEqual(floats.type, .vectorFloat)
      XCTAssertEqual(floats.asVector?.compactMap(\.asDouble), [0.5, -1.5])
      XCTAssertEqual(floats.description, "[0.5, -1.5]")
    }
  }

  func testFixedTypedVectorsOfTwoThreeAndFour() throws {
    for count in 2...4 {
      let numbers = (1...count).map { Int64($0) * -3 }
      for minimum in widths {
        let ints = try FlexBufferReference(
          FlexBufferTestEncoder.encode(.fixedVector(.int, numbers.map { .int($0) }), minimumWidth: minimum))
        XCTAssertEqual(ints.type.fixedVectorLayout?.count, count)
        XCTAssertEqual(ints.type.fixedVectorLayout?.elementType, .int)
        XCTAssertEqual(ints.asVector?.compactMap(\.asInt64), numbers)
        let uints = try FlexBufferReference(
          FlexBufferTestEncoder.encode(.fixedVector(.uint, numbers.map { .uint(UInt64(-$0)) }), minimumWidth: minimum))
        XCTAssertEqual(uints.type.fixedVectorLayout?.elementType, .uint)
        XCTAssertEqual(uints.asVector?.compactMap(\.asUInt64), numbers.map { UInt64(-$0) })
      }
      for minimum in [4, 8] {
        let floats = try FlexBufferReference(
          FlexBufferTestEncoder.encode(.fixedVector(.float, numbers.map { .float(Double($0) / 4, width: 4) }), minimumWidth: minimum))
        XCTAssertEqual(floats.type.fixedVectorLayout?.elementType, .float)
        XCTAssertEqual(floats.asVector?.compactMap(\.asDouble), numbers.map { Double($0) / 4 })
      }
    }
  }

  func testTypeCodesAndHelpers() {
    XCTAssertEqual(FlexBufferType.vectorInt3.fixedVectorLayout?.count, 3)
    XCTAssertEqual(FlexBufferType.vectorFloat4.fixedVectorLayout?.elementType, .float)
    XCTAssertEqual(FlexBufferType.vectorUInt2.fixedVectorLayout?.elementType, .uint)
    XCTAssertNil(FlexBufferType.vector.fixedVectorLayout)
    XCTAssertEqual(FlexBufferType.vectorStringDeprecated.typedVectorElementType, .key)
    XCTAssertNil(FlexBufferType.map.typedVectorElementType)
    XCTAssertTrue(FlexBufferType.bool.isInline)
    XCTAssertFalse(FlexBufferType.indirectInt.isInline)
    XCTAssertEqual(FlexBufferType.vectorBool.rawValue, 36)
  }

  // MARK: - Maps

  func testNestedMapsAndVectors() throws {
    let value = FlexValue.map([
      ("vec", .vector([.int(-100), .string("Fred"), .indirectFloat(4.0, width: 8)])),
      ("foo", .uint(100)),
      ("mymap", .map([("foo", .string("Fred")), ("bar", .typedVector(.int, [.int(1), .int(2)]))])),
      ("bools", .typedVector(.bool, [.bool(true), .bool(false)])),
      ("", .null),
      ("Zed", .fixedVector(.float, [.float(1, width: 4), .float(2, width: 4), .float(3, width: 4)])),
    ])
    for minimum in widths {
      let root = try FlexBufferReference(FlexBufferTestEncoder.encode(value, minimumWidth: minimum))
      let map = try XCTUnwrap(root.asMap)
      XCTAssertEqual(map.keys, ["", "Zed", "bools", "foo", "mymap", "vec"])
      XCTAssertEqual(root["foo"]?.asUInt64, 100)
      XCTAssertEqual(root["vec"]?[1]?.asString, "Fred")
      XCTAssertEqual(root["vec"]?[2]?.asDouble, 4)
      XCTAssertEqual(root["mymap"]?["foo"]?.asString, "Fred")
      XCTAssertEqual(root["mymap"]?["bar"]?[1]?.asInt, 2)
      XCTAssertEqual(root[""]?.isNull, true)
      XCTAssertNil(root["missing"])
      XCTAssertNil(root["fo"])
      XCTAssertNil(root["fooo"])
      XCTAssertEqual(map.map(\.key), map.keys)
      XCTAssertEqual(map.values.count, 6)
      XCTAssertEqual(root.asVector?.count, 6, "a map reads as the vector of its values")
      XCTAssertEqual(
        root.description,
        #"{"": null, "Zed": [1.0, 2.0, 3.0], "bools": [true, false], "foo": 100, "mymap": {"bar": [1, 2], "foo": "Fred"}, "vec": [-100, "Fred", 4.0]}"#
      )
    }
  }

  func testLookupInALargeMapFindsEveryKey() throws {
    let entries = (0..<300).map { ("key\($0)", FlexValue.int(Int64($0))) }
    let root = try FlexBufferReference(FlexBufferTestEncoder.encode(.map(entries)))
    for (key, value) in entries {
      guard case .int(let number) = value else { continue }
      XCTAssertEqual(root[key]?.asInt64, number, key)
    }
    XCTAssertNil(root["key300"])
    XCTAssertNil(root["k"])
  }

  func testDetectionPostProcessOptions() throws {
    let options = FlexValue.map([
      ("max_detections", .int(10)),
      ("max_classes_per_detection", .int(1)),
      ("detections_per_class", .int(100)),
      ("use_regular_nms", .bool(false)),
      ("nms_score_threshold", .float(0.3, width: 4)),
      ("nms_iou_threshold", .float(0.6, width: 4)),
      ("num_classes", .int(90)),
      ("y_scale", .float(10, width: 4)),
      ("x_scale", .float(10, width: 4)),
      ("h_scale", .float(5, width: 4)),
      ("w_scale", .float(5, width: 4)),
    ])
    let root = try FlexBufferReference(FlexBufferTestEncoder.encode(options))
    XCTAssertEqual(root["max_detections"]?.asInt, 10)
    XCTAssertEqual(root["max_classes_per_detection"]?.asInt, 1)
    XCTAssertEqual(root["detections_per_class"]?.asInt, 100)
    XCTAssertEqual(root["use_regular_nms"]?.asBool, false)
    XCTAssertEqual(root["nms_score_threshold"]?.asDouble.map(Float.init), 0.3)
    XCTAssertEqual(root["nms_iou_threshold"]?.asDouble.map(Float.init), 0.6)
    XCTAssertEqual(root["num_classes"]?.asInt, 90)
    XCTAssertEqual(root["y_scale"]?.asDouble, 10)
    XCTAssertEqual(root["w_scale"]?.asDouble, 5)
    XCTAssertEqual(
      root.description,
      #"{"detections_per_class": 100, "h_scale": 5.0, "max_classes_per_detection": 1, "max_detections": 10, "# +
        #""nms_iou_threshold": 0.6, "nms_score_threshold": 0.3, "num_classes": 90, "use_regular_nms": false, "# +
        #""w_scale": 5.0, "x_scale": 10.0, "y_scale": 10.0}"#)
  }

  // MARK: - Lifetime and zero-copy use

  func testReferencesFromAnArrayOutliveTheInitializerScope() throws {
    func makeVector() throws -> FlexBufferReference? {
      try FlexBufferReference(FlexBufferTestEncoder.encode(.vector([.string("kept"), .int(5)])))[0]
    }
    XCTAssertEqual(try makeVector()?.asString, "kept")
  }

  func testReadingFromARawBufferWithoutCopy() throws {
    let bytes = FlexBufferTestEncoder.encode(.map([("a", .int(1)), ("b", .string("two"))]))
    try bytes.withUnsafeBytes { raw in
      let root = try FlexBufferReference(raw)
      XCTAssertEqual(root["a"]?.asInt, 1)
      XCTAssertEqual(root["b"]?.asString, "two")
    }
  }

  func testSharedSubtreesVerifyInLinearTime() throws {
    // A chain of 60 vectors where each holds two offsets to the previous one: 2^60 paths.
    var bytes: [UInt8] = [1, 7]  // vector of one int, size 1, element 7 …
    bytes.append(4)  // … its type byte
    var previous = 1
    for _ in 0..<60 {
      bytes.append(2)  // size
      let start = bytes.count
      bytes += [UInt8(start - previous), UInt8(start + 1 - previous), 40, 40]  // two offsets, type vector/8-bit
      previous = start
    }
    bytes += [UInt8(bytes.count - previous), 40, 1]
    let root = try FlexBufferReference(bytes)
    var node = root
    for _ in 0..<60 { node = try XCTUnwrap(node[1]) }
    XCTAssertEqual(node[0]?.asInt, 7)
  }
}
