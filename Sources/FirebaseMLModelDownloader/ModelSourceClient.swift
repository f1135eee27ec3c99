import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Where the bytes of a model version are.
enum ModelLocation: Sendable {
  /// An HTTP(S) URL, possibly a signed one that stops working at `expiry`.
  case remote(URL, expiry: Date?)
  /// A file on this machine.
  case file(path: String)
}

/// A model version a source offers.
struct RemoteModel: Sendable {
  /// Version identifier stored with the model and returned as ``CustomModel/hash``.
  var hash: String
  /// Declared size in bytes.
  var size: Int64
  /// Expected lowercase hex SHA-256 of the file, when the source states one.
  var sha256: String?
  /// Expected CRC-32C of the file (base64, big-endian, as Cloud Storage states it), if any.
  var crc32c: String? = nil
  /// Expected MD5 of the file (base64, as Cloud Storage states it), if any.
  var md5: String? = nil
  /// Headers the file request needs (an `Authorization` value), if any.
  var requestHeaders: [String: String] = [:]
  /// Where to get the bytes.
  var location: ModelLocation
  /// ETag of the static-hosting index, remembered for the next conditional request.
  var indexETag: String?

  /// The record to store once this version is installed.
  var record: StoredModelRecord {
    StoredModelRecord(name: "", hash: hash, size: size, sha256: sha256, indexETag: indexETag)
  }
}

/// A source's answer to "what is the latest version of this model?".
enum SourceAnswer: Sendable {
  /// The stored model is the latest; `indexETag` is the index validator to remember from now on.
  case unchanged(indexETag: String?)
  /// Another version is available.
  case changed(RemoteModel)
}

/// Something that knows the latest version of models: Firebase ML, a static host, a folder.
protocol ModelSourceClient: Sendable {
  /// Asks for the latest version of model `name`; `local` is the stored model, if any, whose
  /// version may be sent along so the source can answer "unchanged".
  func latestVersion(of name: String, local: StoredModel?) async throws -> SourceAnswer
}

/// A source that cannot be used, failing every request with the reason.
struct UnavailableSource: ModelSourceClient {
  /// Why the source is unusable.
  var error: DownloadError

  func latestVersion(of name: String, local: StoredModel?) async throws -> SourceAnswer { throw error }
}

/// Maps an HTTP status of a metadata request (Firebase model info, static index) to the SDK's
/// errors; `body` may hold Google's `{"error": {"message": …}}`.
func metadataStatusError(_ statusCode: Int, body: [UInt8], what: String) -> DownloadError {
  switch statusCode {
  case 400: return .invalidArgument
  case 401, 403: return .permissionDenied
  case 404: return .notFound
  case 429: return .resourceExhausted
  default:
    let serverMessage = (try? JSONFields(body, what: what))?.object("error").flatMap { try? $0.string("message") }
    return .internalError(description: serverMessage ?? "\(what) retrieval failed with HTTP error code: \(statusCode)")
  }
}

/// Sends a metadata request and returns the response, mapping transport failures the SDK's way.
func sendMetadataRequest(_ request: URLRequest, http: HTTPClient, what: String) async throws -> HTTPResponse {
  do {
    return try await http.send(request, limit: 1 << 20)
  } catch let failure as HTTPFailure {
    switch failure {
    case .transport(let reason), .badRedirect(let reason): throw DownloadError.internalError(description: "Failed to retrieve \(what): \(reason)")
    case .refusedURL(let reason): throw DownloadError.internalError(description: reason)
    }
  }
}

/// The source's ETag with `W/`, quotes and a `--gzip` suffix removed, if it is a SHA-256 in hex.
func sha256FromETag(_ etag: String) -> String? {
  var text = Substring(etag)
  if text.hasPrefix("W/") { text = text.dropFirst(2) }
  text = text.drop(while: { $0 == "\"" })
  while text.last == "\"" { text = text.dropLast() }
  if text.hasSuffix("--gzip") { text = text.dropLast(6) }
  let candidate = text.lowercased()
  return StaticModelIndex.isSHA256Hex(candidate) ? candidate : nil
}
