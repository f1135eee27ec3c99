// The umbrella module: `import Firebase` gives, as in the guides written for Google's SDK, ML Kit's
// custom-model API (`ModelManager`, `ModelInterpreter`, …), Firebase's `ModelDownloader`, and
// TensorFlowLiteSwift's `Interpreter`, plus Foundation. It is a separate, opt-in product: on Apple
// platforms an app that also links Google's Firebase packages must not add it (see the README).
@_exported import FirebaseMLModelDownloader
@_exported import FirebaseMLModelInterpreter
@_exported import Foundation
@_exported import TensorFlowLite
