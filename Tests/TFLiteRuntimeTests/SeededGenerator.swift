/// SplitMix64: a small deterministic generator, so every randomized test failure reproduces.
struct SeededGenerator: RandomNumberGenerator {
  private var state: UInt64

  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var value = state
    value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
    value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
    return value ^ (value >> 31)
  }

  /// `count` random floats in `range`.
  mutating func floats(_ count: Int, in range: ClosedRange<Float> = -1...1) -> [Float] {
    (0..<count).map { _ in Float.random(in: range, using: &self) }
  }

  /// A random integer in `range`.
  mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

  /// A random truth value.
  mutating func bool() -> Bool { Bool.random(using: &self) }
}
