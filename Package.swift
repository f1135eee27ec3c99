// swift-tools-version:6.0
// SwiftTFLite: a pure-Swift, dependency-free TensorFlow Lite runtime.
import PackageDescription

let package = Package(
  name: "SwiftTFLite",
  platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
  products: [
    // MARK: - Public API
    .library(name: "TFLiteFormat", targets: ["TFLiteFormat"]),
    .library(name: "TFLiteRuntime", targets: ["TFLiteRuntime"]),
    .library(name: "TFLiteImage", targets: ["TFLiteImage"]),
    // MARK: - Compatibility faces (module names match the iOS SDKs)
    .library(name: "TensorFlowLite", targets: ["TensorFlowLite"]),
    .library(name: "TensorFlowLiteTaskVision", targets: ["TensorFlowLiteTaskVision"]),
    .library(name: "FirebaseMLModelDownloader", targets: ["FirebaseMLModelDownloader"]),
    .library(name: "FirebaseMLModelInterpreter", targets: ["FirebaseMLModelInterpreter"]),
    // Opt-in umbrella for `import Firebase`; do not add it next to Google's Firebase packages.
    .library(name: "Firebase", targets: ["Firebase"]),
    // MARK: - Tools
    .library(name: "TFLiteCommandLine", targets: ["TFLiteCommandLine"]),
    .executable(name: "tflite", targets: ["tflite"]),
  ],
  targets: [
    // MARK: - Core (no Foundation)
    .target(name: "TFLiteFormat"),
    // Packed GEMM, run-time generated micro-kernels and fixed-point arithmetic: knows nothing of
    // models, nodes or tensors. Its symbols are `package`: shared with the runtime, not public API.
    .target(name: "TFLiteLinearAlgebra"),
    .target(name: "TFLiteRuntime", dependencies: ["TFLiteFormat", "TFLiteLinearAlgebra"]),
    .target(name: "TFLiteImage"),
    // MARK: - Compatibility faces
    .target(name: "TensorFlowLite", dependencies: ["TFLiteRuntime", "TFLiteFormat"]),
    .target(name: "TensorFlowLiteTaskVision", dependencies: ["TensorFlowLite", "TFLiteImage", "TFLiteFormat"]),
    .target(name: "FirebaseMLModelDownloader", dependencies: ["TFLiteFormat"]),
    .target(name: "FirebaseMLModelInterpreter", dependencies: ["TensorFlowLite", "FirebaseMLModelDownloader"]),
    .target(name: "Firebase", dependencies: ["FirebaseMLModelInterpreter", "FirebaseMLModelDownloader", "TensorFlowLite"]),
    // MARK: - Tools
    .target(
      name: "TFLiteCommandLine",
      dependencies: [
        "TFLiteFormat", "TFLiteRuntime", "FirebaseMLModelDownloader", "TFLiteImage", "TensorFlowLiteTaskVision",
      ]),
    .executableTarget(name: "tflite", dependencies: ["TFLiteCommandLine"]),
    // MARK: - Tests
    // Hand-built .tflite files for tests of the API around the kernels (not a product).
    .target(name: "TFLiteTestSupport", path: "Tests/TFLiteTestSupport"),
    .testTarget(name: "TFLiteFormatTests", dependencies: ["TFLiteFormat"]),
    .testTarget(name: "TFLiteImageTests", dependencies: ["TFLiteImage", "TFLiteFormat"]),
    .testTarget(
      name: "TFLiteRuntimeTests",
      dependencies: ["TFLiteRuntime", "TFLiteLinearAlgebra", "TFLiteFormat", "TFLiteTestSupport"]),
    .testTarget(name: "TensorFlowLiteTaskVisionTests", dependencies: ["TensorFlowLiteTaskVision", "TFLiteImage"]),
    .testTarget(name: "TensorFlowLiteTests", dependencies: ["TensorFlowLite", "TFLiteFormat", "TFLiteTestSupport"]),
    .testTarget(
      name: "FirebaseMLModelDownloaderTests", dependencies: ["FirebaseMLModelDownloader"], exclude: ["Fixtures"]),
    // Lifecycle soak checks; Scripts/soak.sh runs them longer, in release and under sanitizers.
    .testTarget(name: "SoakTests", dependencies: ["TensorFlowLite", "TFLiteFormat", "TFLiteTestSupport"]),
    .testTarget(
      name: "FirebaseMLModelInterpreterTests", dependencies: ["FirebaseMLModelInterpreter", "TFLiteFormat"]),
    // The guides' snippets, compiled in Swift 5 mode (Scripts/check_guide_consumer.sh builds them in 5 and 6).
    .testTarget(
      name: "FirebaseGuideTests", dependencies: ["Firebase", "TFLiteFormat"],
      swiftSettings: [.swiftLanguageMode(.v5)]),
    .testTarget(
      name: "TFLiteCommandLineTests",
      dependencies: [
        "TFLiteCommandLine", "TFLiteFormat", "TFLiteRuntime", "TFLiteTestSupport", "TFLiteImage", "TensorFlowLiteTaskVision",
      ]),
  ],
  swiftLanguageModes: [.v6]
)
