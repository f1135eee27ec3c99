import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Firebase ML model hosting: the model-info call of `firebaseml.googleapis.com`, authenticated
/// with a Firebase Installations token.
struct FirebaseMLSource: ModelSourceClient {
  /// The project ID.
  let projectID: String
  /// The API key, sent only as the `key` query parameter.
  let apiKey: String
  /// Sent as `x-ios-bundle-identifier`.
  let bundleIdentifier: String
  /// Base URL of the model-info API.
  let baseURL: URL
  /// The HTTP client.
  let http: HTTPClient
  /// Supplies installation auth tokens.
  let installations: InstallationsClient
  /// Largest accepted model.
  let maximumModelSize: Int64
  /// Diagnostics.
  let log: DownloaderLog

  func latestVersion(of name: String, local: StoredModel?) async throws -> SourceAnswer {
    let token: String
    do {
      token = try await installations.authToken()
    } catch is CancellationError {
      throw CancellationError()
    } catch {
      log("Firebase Installations failed: \(error)")
      throw DownloadError.internalError(description: "Error retrieving auth token.")
    }
    var request = URLRequest(url: try modelInfoURL(for: name))
    request.setValue(bundleIdentifier, forHTTPHeaderField: "x-ios-bundle-identifier")
    request.setValue(token, forHTTPHeaderField: "x-goog-firebase-installations-auth")
    if let local { request.setValue(local.record.hash, forHTTPHeaderField: "if-none-match") }
    let response = try await sendMetadataRequest(request, http: http, what: "model info")
    // An ETag is visible ASCII (RFC 9110); one with controls or spaces is not stored or shown.
    let etag = response.head.header("etag").flatMap { tag in
      tag.utf8.allSatisfy { (0x21...0x7E).contains($0) } ? tag : nil
    }
    switch response.head.statusCode {
    case 200:
      guard let etag else { throw DownloadError.internalError(description: "Model hash missing in model info server response.") }
      return .changed(try parseModelInfo(response.body, hash: etag))
    case 304:
      guard let local else { throw DownloadError.internalError(description: "Model info was deleted unexpectedly.") }
      guard let etag else { throw DownloadError.internalError(description: "Model hash missing in model info server response.") }
      guard etag == local.record.hash else { throw DownloadError.internalError(description: "Unexpected model hash value.") }
      return .unchanged(indexETag: nil)
    default:
      throw metadataStatusError(response.head.statusCode, body: response.body, what: "Model info")
    }
  }

  /// `BASE/v1beta2/projects/{projectID}/models/{name}:download?key={apiKey}`.
  private func modelInfoURL(for name: String) throws -> URL {
    guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false) else {
      throw DownloadError.internalError(description: "Invalid Firebase ML base URL.")
    }
    let project = percentEncodedPathSegment(projectID)
    let basePath = components.percentEncodedPath.hasSuffix("/") ? String(components.percentEncodedPath.dropLast()) : components.percentEncodedPath
    components.percentEncodedPath = basePath + "/v1beta2/projects/\(project)/models/\(name):download"
    components.queryItems = [URLQueryItem(name: "key", value: apiKey)]
    guard let url = components.url else { throw DownloadError.internalError(description: "Invalid Firebase ML base URL.") }
    return url
  }

  /// Reads `downloadUri`, `sizeBytes` and `expireTime` of a 200 answer.
  private func parseModelInfo(_ body: [UInt8], hash: String) throws -> RemoteModel {
    let fields = try JSONFields(body, what: "model info")
    let uriText = try fields.string("downloadUri")
    guard let downloadURL = URL(string: uriText) else {
      throw DownloadError.internalError(description: "Failed to parse model info: invalid downloadUri.")
    }
    let size = try fields.integer("sizeBytes")
    try checkDeclaredSize(size, maximum: maximumModelSize)
    let expiry = try Self.parseTimestamp(try fields.string("expireTime"))
    return RemoteModel(
      hash: hash, size: size, sha256: sha256FromETag(hash), location: .remote(downloadURL, expiry: expiry), indexETag: nil)
  }

  /// Parses an RFC 3339 UTC timestamp with or without fractional seconds.
  static func parseTimestamp(_ text: String) throws -> Date {
    let withFraction = ISO8601DateFormatter()
    withFraction.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    let plain = ISO8601DateFormatter()
    plain.formatOptions = [.withInternetDateTime]
    guard let date = withFraction.date(from: text) ?? plain.date(from: text) else {
      throw DownloadError.internalError(description: "Failed to parse model info: invalid expireTime.")
    }
    return date
  }
}
