import Foundation

/// The static-hosting index `N.json` describing model `N`:
/// `{"name": N, "url": U, "sha256": H, "size": S}`, where `U` is absolute or relative to the
/// index's own URL, `H` the lowercase hex SHA-256 of the file and `S` its size in bytes.
public struct StaticModelIndex: Sendable, Hashable {
  /// The model's name; must equal the `N` of the index file name.
  public var name: String
  /// Where the model file is, absolute or relative to the index.
  public var url: String
  /// Lowercase hexadecimal SHA-256 of the model file.
  public var sha256: String
  /// Size of the model file in bytes.
  public var size: Int64

  /// Creates an index from its four fields.
  public init(name: String, url: String, sha256: String, size: Int64) {
    self.name = name
    self.url = url
    self.sha256 = sha256
    self.size = size
  }

  /// Describes the model file at `path` by hashing it. `name` defaults to the file name without
  /// its extension, `url` to the file name (the file then sits beside the index).
  public init(describingModelAtPath path: String, name: String? = nil, url: String? = nil) throws {
    let fileName = String(path.split(separator: "/").last ?? Substring(path))
    let stem = fileName.split(separator: ".", maxSplits: 1).first.map(String.init) ?? fileName
    let digest = try FileDigest(ofFileAtPath: path)
    self.init(name: name ?? stem, url: url ?? fileName, sha256: digest.sha256, size: digest.size)
  }

  /// The index as JSON text with keys in a fixed order, ending with a newline.
  public var jsonText: String {
    let fields: [(String, String)] = [
      ("name", Self.jsonString(name)), ("url", Self.jsonString(url)),
      ("sha256", Self.jsonString(sha256)), ("size", String(size)),
    ]
    return "{" + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}\n"
  }

  /// `text` as a JSON string literal.
  private static func jsonString(_ text: String) -> String {
    guard let data = try? JSONSerialization.data(withJSONObject: [text], options: [.fragmentsAllowed]),
      let array = String(data: data, encoding: .utf8)
    else { return "\"\"" }
    return String(array.dropFirst().dropLast()).replacingOccurrences(of: "\\/", with: "/")
  }

  /// Parses and checks an index served for model `expectedName`.
  static func parse(_ bytes: [UInt8], expectedName: String, maximumSize: Int64) throws -> StaticModelIndex {
    let object = try JSONFields(bytes, what: "model index")
    let index = StaticModelIndex(
      name: try object.string("name"), url: try object.string("url"),
      sha256: try object.string("sha256").lowercased(), size: try object.integer("size"))
    guard index.name == expectedName else {
      throw DownloadError.internalError(description: "Model index names model '\(index.name)', expected '\(expectedName)'.")
    }
    guard isSHA256Hex(index.sha256) else {
      throw DownloadError.internalError(description: "Model index has an invalid sha256 (expected 64 hexadecimal digits).")
    }
    try checkDeclaredSize(index.size, maximum: maximumSize)
    return index
  }

  /// Whether `text` is 64 lowercase hexadecimal digits.
  static func isSHA256Hex(_ text: String) -> Bool {
    text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
  }
}

/// Throws unless `size` is a plausible model size no larger than `maximum`.
func checkDeclaredSize(_ size: Int64, maximum: Int64) throws {
  guard size > 0 else {
    throw DownloadError.internalError(description: "The source declares an empty or negative model size (\(size) bytes).")
  }
  guard size <= maximum else {
    throw DownloadError.internalError(
      description: "The source declares a model of \(size) bytes, more than the limit of \(maximum) bytes "
        + "(ModelDownloaderSettings.maximumModelSize).")
  }
}

/// Size and SHA-256 of a file, read in one pass.
struct FileDigest: Sendable {
  /// Bytes in the file.
  var size: Int64
  /// Lowercase hex SHA-256.
  var sha256: String

  /// Reads and hashes the file at `path`.
  init(ofFileAtPath path: String) throws {
    var hasher = SHA256()
    var size: Int64 = 0
    try FileSystem.readChunks(atPath: path) { chunk in
      hasher.update(chunk)
      size += Int64(chunk.count)
    }
    self.size = size
    sha256 = hasher.finalizeHex()
  }
}

/// The top-level object of a JSON document, with typed field access and descriptive errors.
struct JSONFields {
  /// The fields.
  let fields: [String: Any]
  /// What the document is, for error messages (`model index`).
  let what: String

  /// Parses `bytes` as a JSON object.
  init(_ bytes: [UInt8], what: String) throws {
    self.what = what
    guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)), let fields = object as? [String: Any] else {
      throw DownloadError.internalError(description: "Failed to parse \(what): not a JSON object.")
    }
    self.fields = fields
  }

  /// The object under `key`, if it is one.
  func object(_ key: String) -> JSONFields? {
    guard let nested = fields[key] as? [String: Any] else { return nil }
    return JSONFields(fields: nested, what: what)
  }

  /// Wraps an already parsed object.
  private init(fields: [String: Any], what: String) {
    self.fields = fields
    self.what = what
  }

  /// The non-empty string under `key`.
  func string(_ key: String) throws -> String {
    guard let value = fields[key] as? String, !value.isEmpty else {
      throw DownloadError.internalError(description: "Failed to parse \(what): missing or empty string '\(key)'.")
    }
    return value
  }

  /// The whole number under `key`, given as a JSON number or as a decimal string (as Google's
  /// APIs spell 64-bit integers).
  func integer(_ key: String) throws -> Int64 {
    if let text = fields[key] as? String, let value = Int64(text) { return value }
    if let number = fields[key] as? NSNumber, !(fields[key] is String), let value = Int64(exactly: number.doubleValue) {
      return value
    }
    throw DownloadError.internalError(description: "Failed to parse \(what): missing or invalid integer '\(key)'.")
  }
}
