import TFLiteFormat

/// The shared seeded generator, visible to every file of this test target.
typealias SeededGenerator = TFLiteFormat.SeededGenerator

/// Conveniences for randomized tests on the shared seeded generator.
extension SeededGenerator {
  /// `count` random floats in `range`.
  mutating func floats(_ count: Int, in range: ClosedRange<Float> = -1...1) -> [Float] {
    (0..<count).map { _ in Float.random(in: range, using: &self) }
  }

  /// A random integer in `range`.
  mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

  /// A random truth value.
  mutating func bool() -> Bool { Bool.random(using: &self) }
}
