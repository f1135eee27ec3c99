import TFLiteFormat
import XCTest

/// Damaged FlexBuffers must each give a value or a thrown error: never a crash or a hang.
final class FlexBufferRobustnessTests: XCTestCase {
  /// Valid buffers to damage: every Python fixture and a few from the test encoder.
  private var seeds: [[UInt8]] {
    flexBufferPythonFixtures.map(\.bytes) + [
      FlexBufferTestEncoder.encode(
        .map([
          ("v", .vector([.indirectFloat(2, width: 8), .deprecatedStringVector(["a", "bc"]), .typedVector(.float, [.float(1, width: 2)])])),
          ("f", .fixedVector(.uint, [.uint(1), .uint(2), .uint(3)])),
          ("s", .string("text")),
        ])),
      FlexBufferTestEncoder.encode(.vector([.map([("k", .blob([1, 2, 3]))]), .indirectUInt(9, width: 2)]), minimumWidth: 8),
    ]
  }

  /// Reads everything reachable from `root` through the public API.
  private func walk(_ root: FlexBufferReference) {
    _ = root.description
    visit(root)
  }

  /// Calls every accessor on `value` and its descendants.
  private func visit(_ value: FlexBufferReference) {
    _ = (value.asInt64, value.asUInt64, value.asDouble, value.asBool, value.asString, value.asBlob)
    if let map = value.asMap {
      for (key, entry) in map {
        // Keys with invalid UTF-8 are repaired, so cannot be looked up; large maps are spot-checked.
        if !key.contains("\u{FFFD}"), map.count < 64 || key.hasSuffix("7") {
          XCTAssertNotNil(map[key], "every stored key must be found by lookup")
        }
        visit(entry)
      }
    } else if let vector = value.asVector {
      for element in vector { visit(element) }
    }
  }

  func testEveryTruncationIsReadOrRejected() {
    var rejected = 0
    var read = 0
    for seed in seeds {
      for length in 0..<seed.count {
        for bytes in [Array(seed.prefix(length)), Array(seed.suffix(length))] {
          if let root = try? FlexBufferReference(bytes) {
            walk(root)
            read += 1
          } else {
            rejected += 1
          }
        }
      }
    }
    XCTAssertGreaterThan(rejected, 0)
    XCTAssertGreaterThan(rejected + read, 10_000)
  }

  /// 19 seeds × 600 = 11,400 mutated buffers.
  private let mutationsPerSeed = 600

  func testSeededRandomMutationsAreReadOrRejected() {
    var generator = SeededGenerator(seed: 0x5EED_F1E8)
    var outcomes = (read: 0, rejected: 0)
    for seed in seeds {
      for _ in 0..<mutationsPerSeed {
        var bytes = seed
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
          let index = Int.random(in: 0..<bytes.count, using: &generator)
          switch Int.random(in: 0..<3, using: &generator) {
          case 0: bytes[index] = UInt8.random(in: 0...255, using: &generator)
          case 1: bytes[index] ^= 1 << UInt8.random(in: 0..<8, using: &generator)
          default: bytes[index] = [0, 1, 0x7F, 0x80, 0xFF].randomElement(using: &generator) ?? 0
          }
        }
        do {
          walk(try FlexBufferReference(bytes))
          outcomes.read += 1
        } catch {
          XCTAssertTrue(error is FlexBufferError, "\(error)")
          outcomes.rejected += 1
        }
      }
    }
    XCTAssertEqual(outcomes.read + outcomes.rejected, seeds.count * mutationsPerSeed)
    XCTAssertGreaterThan(outcomes.rejected, 1000)
    XCTAssertGreaterThan(outcomes.read, 1000)
  }

  func testRandomBytesAreReadOrRejected() {
    var generator = SeededGenerator(seed: 42)
    for _ in 0..<5000 {
      let bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
      if let root = try? FlexBufferReference(bytes) { walk(root) }
    }
  }
}

