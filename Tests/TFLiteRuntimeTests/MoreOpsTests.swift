import TFLiteFormat
import XCTest

@testable import TFLiteRuntime

/// The refusals of the `more_` kernels (CONV_3D, bit operations, unsorted segments, …): bad shapes,
/// out-of-range indices and unsupported variants throw descriptive errors instead of crashing.
final class MoreOpsTests: XCTestCase {
  private typealias H = KernelHarness

  private func floats(_ index: Int, _ shape: [Int]) -> RuntimeTensor {
    H.floatTensor(index, shape, (0..<shape.reduce(1, *)).map { Float($0) * 0.25 - 1 })
  }

  private func ints(_ index: Int, _ shape: [Int], _ values: [Int32]) -> RuntimeTensor {
    H.quantizedTensor(index, "t\(index)", .int32, shape, values, scales: nil, zeroPoints: [], constant: true)
  }

  private func conv3DOptions() -> BuiltinOptions {
    .conv3DOptions(Conv3DOptions(padding: .same, strideD: 1, strideW: 1, strideH: 1, dilationDFactor: 1, dilationWFactor: 1, dilationHFactor: 1))
  }

  func testConvolution3DRejectsMismatchedChannelsAndOutputShapes() {
    let conv = H.node("CONV_3D", [floats(0, [1, 3, 3, 3, 2]), floats(1, [1, 1, 1, 3, 4])], H.outputTensor(2), conv3DOptions())
    H.assertRejects(conv, containing: "input channels")
    let noStride = H.node("CONV_3D", [floats(0, [1, 3, 3, 3, 2]), floats(1, [1, 1, 1, 2, 4])], H.outputTensor(2), .none)
    H.assertRejects(noStride, containing: "stride 0")
    let transpose = H.node(
      "CONV_3D_TRANSPOSE", [ints(0, [5], [1, 9, 9, 9, 4]), floats(1, [2, 2, 2, 4, 2]), floats(2, [1, 3, 3, 3, 2])],
      H.outputTensor(3), conv3DOptions())
    H.assertRejects(transpose, containing: "is not what a convolution")
    let badBatch = H.node(
      "CONV_3D_TRANSPOSE", [ints(0, [5], [2, 3, 3, 3, 4]), floats(1, [2, 2, 2, 4, 2]), floats(2, [1, 3, 3, 3, 2])],
      H.outputTensor(3), conv3DOptions())
    H.assertRejects(badBatch, containing: "does not fit")
  }

  func testElementwiseRefusals() {
    H.assertRejects(H.node("ATAN2", [floats(0, [2, 3]), floats(1, [1, 3])], H.outputTensor(2), .none), containing: "one shape")
    H.assertRejects(H.node("RIGHT_SHIFT", [floats(0, [2]), floats(1, [2])], H.outputTensor(2), .none), containing: "FLOAT32")
    let xor = H.node("BITWISE_XOR", [ints(0, [2, 3], [1, 2, 3, 4, 5, 6]), ints(1, [4], [1, 2, 3, 4])], H.outputTensor(2, type: .int32), .none)
    H.assertRejects(xor, containing: "broadcast")
    let args = H.node("BROADCAST_ARGS", [ints(0, [2], [2, 3]), ints(1, [2], [4, 3])], H.outputTensor(2, type: .int32), .none)
    H.assertRejects(args, containing: "do not broadcast")
  }

  func testIndexRefusals() {
    let segments = H.node(
      "UNSORTED_SEGMENT_SUM", [floats(0, [3, 2]), ints(1, [3], [0, 5, 1]), ints(2, [1], [2])], H.outputTensor(3), .none)
    H.assertRejects(segments, containing: "not below num_segments")
    let prefix = H.node(
      "UNSORTED_SEGMENT_MAX", [floats(0, [3, 2]), ints(1, [2], [0, 1]), ints(2, [1], [2])], H.outputTensor(3), .none)
    H.assertRejects(prefix, containing: "leading axes")
    let update = H.node(
      "DYNAMIC_UPDATE_SLICE", [floats(0, [2, 2]), floats(1, [3, 1]), ints(2, [2], [0, 0])], H.outputTensor(3), .none)
    H.assertRejects(update, containing: "does not fit")
    let reverse = H.node(
      "REVERSE_SEQUENCE", [floats(0, [2, 3]), ints(1, [2], [1, 4])], H.outputTensor(2),
      .reverseSequenceOptions(ReverseSequenceOptions(seqDim: 1, batchDim: 0)))
    H.assertRejects(reverse, containing: "outside [0, 3]")
    let sparse = H.node(
      "SPARSE_TO_DENSE", [ints(0, [2, 2], [0, 0, 2, 1]), ints(1, [2], [2, 2]), floats(2, [2]), H.floatTensor(3, [], [0])],
      H.outputTensor(4), .none)
    H.assertRejects(sparse, containing: "outside extent")
    let lookup = H.node(
      "EMBEDDING_LOOKUP_SPARSE",
      [ints(0, [2], [0, 7]), ints(1, [2, 2], [0, 0, 1, 0]), ints(2, [2], [2, 2]), floats(3, [2]), floats(4, [3, 2])],
      H.outputTensor(5), .embeddingLookupSparseOptions(EmbeddingLookupSparseOptions(combiner: .sum)))
    H.assertRejects(lookup, containing: "outside [0, 3)")
  }

  func testShapeAndOptionRefusals() {
    H.assertRejects(H.node("BITCAST", [floats(0, [3])], H.outputTensor(1, type: .int64), .none), containing: "last axis of 2")
    let diagonal = H.node("MATRIX_SET_DIAG", [floats(0, [2, 3]), floats(1, [3])], H.outputTensor(2), .none)
    H.assertRejects(diagonal, containing: "expected [2]")
    H.assertRejects(
      H.node("DILATE", [floats(0, [2, 2]), ints(1, [2], [1, 0]), H.floatTensor(2, [], [0])], H.outputTensor(3), .none),
      containing: "dilation 0")
    H.assertRejects(
      H.node("RFFT2D", [floats(0, [4, 6]), ints(1, [2], [4, 6])], H.outputTensor(2, type: .complex64), .none),
      containing: "powers of two")
    H.assertRejects(
      H.node("FAKE_QUANT", [floats(0, [4])], H.outputTensor(1), .fakeQuantOptions(FakeQuantOptions(min: -1, max: 1, numBits: 8, narrowRange: true))),
      containing: "narrow_range")
    H.assertRejects(
      H.node("BUCKETIZE", [floats(0, [4])], H.outputTensor(1, type: .int32), .bucketizeOptions(BucketizeOptions(boundaries: [1, 0]))),
      containing: "not sorted")
  }
}
