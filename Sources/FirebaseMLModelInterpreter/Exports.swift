// What `import FirebaseMLModelInterpreter` brings besides this module's own types: Foundation
// (as the SDK's Objective-C module did) and the model downloader, whose `ModelDownloadConditions`
// and `FirebaseApp` this face shares rather than duplicates.
@_exported import FirebaseMLModelDownloader
@_exported import Foundation
