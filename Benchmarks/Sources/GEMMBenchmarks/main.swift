// GOP/s of the GEMMs per kernel kind, one thread, B pre-packed, timed by the thread's CPU time
// (so another process on the same core lowers the figures less than wall time would):
// - float (default): Swift kernel, generated AVX2+FMA, generated AVX-512F; bias and RELU6 (GFLOP/s);
// - `int8`: Swift kernel on 16-bit panels, generated AVX-VNNI, generated AVX512-VNNI; full
//   requantization to int8 (K must be a multiple of 4).
//
//   swift run -c release --package-path Benchmarks gemm-benchmarks [int8] [M K N ...]
import Foundation
@_spi(Benchmarking) import TFLiteRuntime

/// MobileNetV2-like 1×1 convolutions (M = pixels, K = input channels, N = output channels) and a square product.
let defaultShapes = [(12544, 32, 16), (3136, 144, 24), (784, 192, 32), (196, 576, 96), (49, 960, 160), (512, 512, 512)]

let isInteger = CommandLine.arguments.dropFirst().first == "int8"
let numbers = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let shapes =
  numbers.count >= 3
  ? stride(from: 0, to: numbers.count - 2, by: 3).map { (numbers[$0], numbers[$0 + 1], numbers[$0 + 2]) } : defaultShapes

/// The kernel kinds this machine runs and the rate of one product with each.
let kinds: [(name: String, rate: (Int, Int, Int) -> Double?)] =
  isInteger
  ? IntegerGEMMBenchmark.KernelKind.allCases.filter(IntegerGEMMBenchmark.isAvailable).map { kind in
    (kind.rawValue, { IntegerGEMMBenchmark.gigaops(rows: $0, columns: $2, depth: $1, kind: kind) })
  }
  : FloatGEMMBenchmark.KernelKind.allCases.filter(FloatGEMMBenchmark.isAvailable).map { kind in
    (kind.rawValue, { FloatGEMMBenchmark.gigaflops(rows: $0, columns: $2, depth: $1, kind: kind) })
  }

/// `text` padded with spaces to `width` characters (left-aligned).
func padded(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }

print(padded("M×K×N", 16) + kinds.map { padded($0.name, 13) }.joined())
for (rows, depth, columns) in shapes {
  var line = padded("\(rows)×\(depth)×\(columns)", 16)
  for kind in kinds { line += padded(String(format: "%.1f", kind.rate(rows, depth, columns) ?? .nan), 13) }
  print(line)
}
