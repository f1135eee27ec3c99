import TFLiteLinearAlgebra

/// What `tflite bench --verbose` shows for a node: the kind of arithmetic its kernel does
/// (float, integer, hybrid, reference, or the element type of a type-generic kernel), the kernel
/// type, and the route and instruction-set level of its inner loop.
///
/// Kernels that choose between variants describe their choice through ``Kernel/kernelDescription``;
/// every other kernel runs its Swift code, compiled for the build's target.
enum KernelDescription {
  /// The instruction-set level of the Swift SIMD code in this build: NEON on AArch64; on x86-64
  /// the SSE baseline of a default build, or FMA-capable vector code when the build targets a CPU
  /// with fast fused multiply-adds (`FusedMultiplyAdd.isHardware`).
  static var swiftLevel: String {
    #if arch(arm64)
      "Swift SIMD (NEON)"
    #elseif arch(x86_64)
      FusedMultiplyAdd.isHardware ? "Swift SIMD (FMA build)" : "Swift SIMD (SSE baseline)"
    #else
      "Swift SIMD"
    #endif
  }

  /// The code float GEMMs run on now: the run-time generated kernels of the newest instruction set
  /// (unless turned off for this call, ``RunnerOptions/usesGeneratedKernels``), else the Swift ones.
  static var floatGEMMLevel: String {
    GeneratedFloatKernels.current.map { "generated \($0.isa)" } ?? swiftLevel
  }

  /// The description of a kernel whose `eval` is a float GEMM: `GEMM, generated AVX2+FMA`.
  static var floatGEMM: String { "GEMM, \(floatGEMMLevel)" }

  /// Where a depthwise convolution over `channels` output channels runs: `generated AVX-512F` when
  /// the generated kernels (`GeneratedDepthwiseKernels`) compute its whole 16-channel blocks and a
  /// last 8-channel one, with the last channels past them named as Swift code; the Swift level when
  /// there is no generated kernel or fewer than 8 channels. `channels` nil: the 8-bit kernel, which pads its channels to blocks
  /// and runs on the byte kernels' instruction set (AVX2 on AVX-512 CPUs without VNNI).
  static func depthwiseLevel(channels: Int? = nil) -> String {
    let covered = channels.map(DepthwiseKernelGenerator.floatChannelsCovered)
    guard let kernels = GeneratedDepthwiseKernels.current, covered.map({ $0 > 0 }) ?? true else { return swiftLevel }
    let remainder = (channels ?? 0) - (covered ?? 0)
    return "generated \(channels == nil ? kernels.byteKernelISA : kernels.isa)" + (remainder == 0 ? "" : " (last \(remainder) channels: \(swiftLevel))")
  }

  /// The description of an 8-bit or float depthwise convolution: `depthwise, generated AVX-512F`
  /// (see `depthwiseLevel(channels:)`).
  static func depthwise(channels: Int? = nil) -> String { "depthwise, \(depthwiseLevel(channels: channels))" }

  /// `hybrid`, `integer`, `reference` from the kernel type's name; otherwise `float` for a float
  /// output and the output's element type (`int32`, `bool`, ...) for a type-generic kernel.
  static func kind(kernelTypeName name: String, outputType: ElementType?) -> String {
    if name.hasPrefix("Reference") { return "reference" }
    if name.hasPrefix("Hybrid") { return "hybrid" }
    if name.hasPrefix("Integer") || name.hasPrefix("Requantizing") { return "integer" }
    switch outputType {
    case .float32?, .float16?, .float64?, .bfloat16?: return "float"
    case let type?: return type.name.lowercased()
    case nil: return "no output"
    }
  }
}
