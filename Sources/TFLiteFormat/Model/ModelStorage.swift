#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#elseif canImport(WASILibc)
  import WASILibc
#endif

/// Owns the bytes of one model: a read-only memory map of a file, or a private heap copy.
///
/// `@unchecked Sendable`: the bytes never change after `init`, and `deinit` is the only release.
final class ModelStorage: @unchecked Sendable {
  /// The model's bytes, valid as long as this object lives.
  let bytes: UnsafeRawBufferPointer
  /// Whether ``bytes`` is a memory map (released with `munmap`) or heap memory.
  private let isMapped: Bool

  /// Copies `source` into memory this object owns.
  init(copying source: UnsafeRawBufferPointer) {
    let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: max(source.count, 1), alignment: 16)
    if let base = source.baseAddress, let destination = memory.baseAddress {
      destination.copyMemory(from: base, byteCount: source.count)
    }
    bytes = UnsafeRawBufferPointer(rebasing: memory[0..<source.count])
    isMapped = false
  }

  /// Maps the regular file at `path` read-only, or reads it into memory where mapping fails.
  init(contentsOfFile path: String) throws {
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else { throw ModelFormatError(message: "cannot open '\(path)': \(Self.lastError())", offset: nil) }
    defer { _ = close(descriptor) }
    var status = stat()
    guard fstat(descriptor, &status) == 0 else {
      throw ModelFormatError(message: "cannot read the attributes of '\(path)': \(Self.lastError())", offset: nil)
    }
    let fileType = status.st_mode & S_IFMT
    guard fileType != S_IFDIR else { throw ModelFormatError(message: "'\(path)' is a directory, not a model file", offset: nil) }
    guard fileType == S_IFREG else { throw ModelFormatError(message: "'\(path)' is not a regular file", offset: nil) }
    guard let size = Int(exactly: status.st_size), size > 0 else {
      throw ModelFormatError(message: status.st_size == 0 ? "'\(path)' is empty" : "'\(path)' is too large for this platform", offset: 0)
    }
    #if !os(WASI)
      if let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), address != UnsafeMutableRawPointer(bitPattern: -1) {
        bytes = UnsafeRawBufferPointer(start: address, count: size)
        isMapped = true
        return
      }
    #endif
    let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
    var filled = 0
    while filled < size {
      let count = read(descriptor, memory.baseAddress! + filled, size - filled)
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else {
        memory.deallocate()
        throw ModelFormatError(message: "cannot read '\(path)': \(count == 0 ? "the file shrank while reading" : Self.lastError())", offset: filled)
      }
      filled += count
    }
    bytes = UnsafeRawBufferPointer(memory)
    isMapped = false
  }

  /// Hands the whole pages inside `range` back to the operating system when ``bytes`` is a read-only
  /// file mapping, so they stop counting as this process's resident memory once a kernel has copied
  /// the weights they hold. Nothing changes for a reader: a page read again is loaded from the file
  /// anew. Heap copies, ranges outside ``bytes`` and platforms without `madvise` are left alone.
  /// Returns the number of bytes released.
  @discardableResult
  func releasePages(in range: UnsafeRawBufferPointer) -> Int {
    #if (canImport(Glibc) || canImport(Musl) || canImport(Darwin)) && !os(WASI)
      guard isMapped, let base = bytes.baseAddress, let start = range.baseAddress, range.count > 0 else { return 0 }
      let mappingStart = UInt(bitPattern: base)
      let first = UInt(bitPattern: start)
      let end = first &+ UInt(range.count)
      guard first >= mappingStart, end <= mappingStart &+ UInt(bytes.count), end > first else { return 0 }
      let pageSize = UInt(max(sysconf(Int32(_SC_PAGESIZE)), 1))
      let firstPage = (first &+ pageSize &- 1) / pageSize &* pageSize
      let endPage = end / pageSize &* pageSize
      guard endPage > firstPage, let address = UnsafeMutableRawPointer(bitPattern: firstPage) else { return 0 }
      let count = Int(endPage &- firstPage)
      return madvise(address, count, Int32(MADV_DONTNEED)) == 0 ? count : 0
    #else
      return 0
    #endif
  }

  deinit {
    #if !os(WASI)
      if isMapped {
        _ = munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count)
        return
      }
    #endif
    bytes.deallocate()
  }

  /// The C library's message for the current `errno`.
  private static func lastError() -> String {
    String(cString: strerror(errno))
  }
}
