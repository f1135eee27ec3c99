#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

extension NumPyArray {
  /// Reads and parses the `.npy` file at `path`.
  public init(contentsOfFile path: String) throws {
    try self.init(parsing: NumPyFileAccess.readFile(at: path))
  }

  /// Writes the array as an `.npy` file at `path`: first to a temporary file next to it, which
  /// then replaces `path`, so readers never see a half-written file.
  public func write(toFile path: String, version: NumPyFormatVersion = .version1) throws {
    try NumPyFileAccess.replaceFile(at: path, with: serialized(version: version))
  }
}

/// Whole-file reads and atomic replacement with the C library, without Foundation.
enum NumPyFileAccess {
  /// The contents of the regular file at `path`.
  static func readFile(at path: String) throws -> [UInt8] {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw systemError("cannot open", path) }
    defer { _ = close(descriptor) }
    var status = stat()
    guard fstat(descriptor, &status) == 0 else { throw systemError("cannot inspect", path) }
    guard status.st_mode & S_IFMT == S_IFREG else {
      throw NumPyError(message: "'\(path)' is not a regular file")
    }
    guard let size = Int(exactly: status.st_size) else {
      throw NumPyError(message: "'\(path)' is too large to read")
    }
    var contents = [UInt8](repeating: 0, count: size)
    var filled = 0
    while filled < size {
      let count = contents.withUnsafeMutableBytes { read(descriptor, $0.baseAddress.map { $0 + filled }, size - filled) }
      if count < 0, errno == EINTR { continue }
      guard count >= 0 else { throw systemError("cannot read", path) }
      guard count > 0 else { throw NumPyError(message: "'\(path)' shrank while being read") }
      filled += count
    }
    return contents
  }

  /// Writes `contents` to a new temporary file beside `path`, flushes it and renames it to `path`.
  /// On any failure the temporary file is removed and `path` is left as it was.
  static func replaceFile(at path: String, with contents: [UInt8]) throws {
    let temporaryPath = "\(path).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { throw systemError("cannot create", temporaryPath) }
    do {
      var written = 0
      while written < contents.count {
        let count = contents.withUnsafeBytes { write(descriptor, $0.baseAddress.map { $0 + written }, contents.count - written) }
        if count < 0, errno == EINTR { continue }
        guard count > 0 else { throw systemError("cannot write", temporaryPath) }
        written += count
      }
      guard fsync(descriptor) == 0 else { throw systemError("cannot flush", temporaryPath) }
    } catch {
      _ = close(descriptor)
      _ = unlink(temporaryPath)
      throw error
    }
    guard close(descriptor) == 0 else {
      let error = systemError("cannot close", temporaryPath)
      _ = unlink(temporaryPath)
      throw error
    }
    guard rename(temporaryPath, path) == 0 else {
      let error = systemError("cannot replace", path)
      _ = unlink(temporaryPath)
      throw error
    }
  }

  /// An error naming the failed action, the path and the C library's reason (from `errno`).
  private static func systemError(_ action: String, _ path: String) -> NumPyError {
    NumPyError(message: "\(action) '\(path)': \(String(cString: strerror(errno)))")
  }
}
