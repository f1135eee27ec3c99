import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Cloud Storage for Firebase through its REST API: model `N` is the object `PREFIX` + `N.tflite`
/// of the bucket. The object's metadata (`GET BASE/v0/b/BUCKET/o/OBJECT`, the object name
/// percent-encoded as one segment) gives `generation` (the version), `size`, `crc32c` and
/// `md5Hash` (both verified after the download when present); the bytes come from the same URL with `alt=media` (and the
/// object's first download token, if it has one), resumed with Range requests. An optional
/// `Authorization` value (for example `Firebase <ID token>`) goes with both requests; public-read
/// objects need none.
struct CloudStorageSource: ModelSourceClient {
  /// The bucket (`project.appspot.com`, `project.firebasestorage.app`, …).
  let bucket: String
  /// Prepended to `N.tflite` to form the object name.
  let objectPrefix: String
  /// Base URL of the API (`https://firebasestorage.googleapis.com` unless overridden).
  let baseURL: URL
  /// The `Authorization` header value, if any.
  let authorization: String?
  /// The HTTP client.
  let http: HTTPClient
  /// Largest accepted model.
  let maximumModelSize: Int64

  func latestVersion(of name: String, local: StoredModel?) async throws -> SourceAnswer {
    let metadataURL = try objectURL(for: name)
    var request = URLRequest(url: metadataURL)
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    if let authorization { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
    let response = try await sendMetadataRequest(request, http: http, what: "object metadata")
    guard response.head.statusCode == 200 else {
      throw metadataStatusError(response.head.statusCode, body: response.body, what: "Object metadata")
    }
    let fields = try JSONFields(response.body, what: "object metadata")
    let generation = try fields.string("generation")
    guard generation.utf8.allSatisfy({ (48...57).contains($0) }) else {
      throw DownloadError.internalError(description: "Failed to parse object metadata: 'generation' is not a decimal number.")
    }
    let size = try fields.integer("size")
    try checkDeclaredSize(size, maximum: maximumModelSize)
    if let local, local.record.hash == generation, local.record.size == size { return .unchanged(indexETag: nil) }
    let crc32c = try? fields.string("crc32c")
    if let crc32c, Data(base64Encoded: crc32c)?.count != 4 {
      throw DownloadError.internalError(description: "Failed to parse object metadata: 'crc32c' is not base64 of 4 bytes.")
    }
    let md5 = try? fields.string("md5Hash")
    if let md5, Data(base64Encoded: md5)?.count != 16 {
      throw DownloadError.internalError(description: "Failed to parse object metadata: 'md5Hash' is not base64 of 16 bytes.")
    }
    var media = URLComponents(url: metadataURL, resolvingAgainstBaseURL: false)
    var query = [URLQueryItem(name: "alt", value: "media")]
    if let token = (try? fields.string("downloadTokens"))?.split(separator: ",").first {
      query.append(URLQueryItem(name: "token", value: String(token)))
    }
    media?.queryItems = query
    guard let mediaURL = media?.url else { throw DownloadError.invalidArgument }
    var headers: [String: String] = [:]
    if let authorization { headers["Authorization"] = authorization }
    return .changed(
      RemoteModel(
        hash: generation, size: size, sha256: nil, crc32c: crc32c, md5: md5, requestHeaders: headers,
        location: .remote(mediaURL, expiry: nil), indexETag: nil))
  }

  /// `BASE/v0/b/BUCKET/o/OBJECT` for model `name`.
  private func objectURL(for name: String) throws -> URL {
    let base = baseURL.absoluteString.hasSuffix("/") ? String(baseURL.absoluteString.dropLast()) : baseURL.absoluteString
    let objectName = objectPrefix + name + ".tflite"
    guard !bucket.isEmpty, let url = URL(string: "\(base)/v0/b/\(percentEncodedPathSegment(bucket))/o/\(percentEncodedPathSegment(objectName))")
    else { throw DownloadError.invalidArgument }
    return url
  }
}
