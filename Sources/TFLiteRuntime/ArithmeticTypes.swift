// The two types of the fixed-point layer (`TFLiteLinearAlgebra`) that appear in this module's public
// API (`RunnerOptions.roundingPolicy` and the reference kernels' arguments). They are named here so
// clients of `TFLiteRuntime` use them without importing the lower layer.
import TFLiteLinearAlgebra

/// How a 32-bit accumulator is multiplied by a quantized multiplier: LiteRT's two roundings or one.
public typealias RoundingPolicy = TFLiteLinearAlgebra.RoundingPolicy

/// The fused activation a kernel clamps its outputs with.
public typealias FusedActivation = TFLiteLinearAlgebra.FusedActivation
