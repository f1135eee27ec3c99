import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Static hosting: the index `BASE/N.json` fetched with `If-None-Match`, the file it names
/// fetched with resumable range requests.
struct StaticHostingSource: ModelSourceClient {
  /// The folder URL holding the indexes.
  let baseURL: URL
  /// The HTTP client.
  let http: HTTPClient
  /// Largest accepted model.
  let maximumModelSize: Int64

  func latestVersion(of name: String, local: StoredModel?) async throws -> SourceAnswer {
    let base = baseURL.absoluteString.hasSuffix("/") ? baseURL.absoluteString : baseURL.absoluteString + "/"
    guard let indexURL = URL(string: base + name + ".json") else { throw DownloadError.invalidArgument }
    var request = URLRequest(url: indexURL)
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    if let indexETag = local?.record.indexETag { request.setValue(indexETag, forHTTPHeaderField: "If-None-Match") }
    let response = try await sendMetadataRequest(request, http: http, what: "model index")
    switch response.head.statusCode {
    case 200:
      let index = try StaticModelIndex.parse(response.body, expectedName: name, maximumSize: maximumModelSize)
      guard let fileURL = URL(string: index.url, relativeTo: indexURL)?.absoluteURL else {
        throw DownloadError.internalError(description: "Model index has an invalid url.")
      }
      do {
        try http.policy.check(fileURL)
      } catch {
        throw DownloadError.internalError(description: "Model index url refused: \(error)")
      }
      let etag = response.head.header("etag")
      if let local, local.record.sha256 == index.sha256, local.record.size == index.size {
        return .unchanged(indexETag: etag)
      }
      return .changed(
        RemoteModel(hash: index.sha256, size: index.size, sha256: index.sha256, location: .remote(fileURL, expiry: nil), indexETag: etag))
    case 304:
      guard let local else { throw DownloadError.internalError(description: "Model info was deleted unexpectedly.") }
      guard let sentETag = local.record.indexETag else {
        throw DownloadError.internalError(
          description: "The server answered 304 Not Modified to a request without a condition (no If-None-Match was sent).")
      }
      return .unchanged(indexETag: sentETag)
    default:
      throw metadataStatusError(response.head.statusCode, body: response.body, what: "Model index")
    }
  }
}

/// A local folder: `N.json` (the static-hosting index, its `url` a path relative to the folder
/// or a `file://` URL) or else `N.tflite`.
struct LocalDirectorySource: ModelSourceClient {
  /// The folder.
  let directory: URL
  /// Largest accepted model.
  let maximumModelSize: Int64

  func latestVersion(of name: String, local: StoredModel?) async throws -> SourceAnswer {
    let indexURL = directory.appendingPathComponent(name + ".json")
    let expected: (path: String, size: Int64, sha256: String)
    if FileSystem.regularFileSize(atPath: indexURL.path) != nil {
      let bytes = try readFile(indexURL.path, limit: 1 << 20)
      let index = try StaticModelIndex.parse(bytes, expectedName: name, maximumSize: maximumModelSize)
      guard let fileURL = URL(string: index.url, relativeTo: indexURL)?.absoluteURL, fileURL.isFileURL else {
        throw DownloadError.internalError(description: "Model index in a local folder must name a local file.")
      }
      expected = (try confinedPath(fileURL.path), index.size, index.sha256)
    } else {
      let path = directory.appendingPathComponent(name + ".tflite").path
      guard let size = FileSystem.regularFileSize(atPath: path) else { throw DownloadError.notFound }
      try checkDeclaredSize(size, maximum: maximumModelSize)
      let digest: FileDigest
      do {
        digest = try FileDigest(ofFileAtPath: path)
      } catch {
        throw DownloadError.internalError(description: "Could not read model file: \(error)")
      }
      expected = (path, digest.size, digest.sha256)
    }
    if let local, local.record.sha256 == expected.sha256, local.record.size == expected.size {
      return .unchanged(indexETag: nil)
    }
    return .changed(
      RemoteModel(hash: expected.sha256, size: expected.size, sha256: expected.sha256, location: .file(path: expected.path), indexETag: nil))
  }

  /// `path` with links resolved, when it lies inside the folder (links resolved too); an index
  /// naming a file elsewhere (`../`, an absolute path, a link leading out) is refused.
  private func confinedPath(_ path: String) throws -> String {
    let folder = directory.resolvingSymlinksInPath().standardizedFileURL.path
    let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().standardizedFileURL.path
    guard target.hasPrefix(folder.hasSuffix("/") ? folder : folder + "/") else {
      throw DownloadError.internalError(
        description: "Model index names a file outside its folder (\(displayable(path))); a local index may only name files inside \(displayable(folder)).")
    }
    return target
  }

  /// Reads a small file, mapping failures to download errors.
  private func readFile(_ path: String, limit: Int) throws -> [UInt8] {
    do {
      return try FileSystem.readFile(atPath: path, limit: limit)
    } catch {
      throw DownloadError.internalError(description: "Could not read model index: \(error)")
    }
  }
}
