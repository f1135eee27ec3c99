// Temporary memory of a few kilobytes for one kernel call, kept per thread.
//
// `withUnsafeTemporaryAllocation` takes the stack only for blocks of at most 1 KiB on Linux; a
// larger block is a `malloc` and a `free` per call. The 8-bit depthwise windows and the row-corrected
// GEMM's sum tiles are 2–10 KiB and are taken once per output row or row block, so on the mini
// networks those calls (with glibc's `malloc_consolidate` when the block is freed) were about 5 %
// of an invoke. A thread's workspace is allocated on its first use, grows to the largest block
// asked of it and is freed when the thread ends; the caller and `ParallelWork`'s helpers are the
// threads that use it.

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Per-thread scratch memory for the duration of one call (see the file comment).
@usableFromInline package enum ThreadWorkspace {
  /// The workspace of one thread: its block, the block's size, and whether a call is using it.
  @usableFromInline struct Header {
    @usableFromInline var bytes: UnsafeMutableRawPointer?
    @usableFromInline var byteCount: Int
    @usableFromInline var isInUse: Bool
  }

  /// Alignment of every block (a cache line, and the widest vector).
  @usableFromInline static let alignment = 64

  /// The key of the calling thread's header; its destructor frees the header and the block.
  @usableFromInline static let key: pthread_key_t = {
    var key = pthread_key_t()
    let created = pthread_key_create(&key) { value in
      guard let header = (value as UnsafeMutableRawPointer?)?.assumingMemoryBound(to: Header.self) else { return }
      header.pointee.bytes?.deallocate()
      header.deallocate()
    }
    precondition(created == 0, "no thread-specific key for the kernels' workspace")
    return key
  }()

  /// Runs `body` with at least `byteCount` bytes, 64-byte aligned, uninitialized, valid until
  /// `body` returns. The calling thread's workspace is reused; a call made while the workspace is
  /// in use (a nested call) gets a temporary allocation of its own instead.
  @inlinable package static func with<Result>(
    byteCount: Int, _ body: (UnsafeMutableRawPointer) throws -> Result
  ) rethrows -> Result {
    let header = currentHeader()
    guard !header.pointee.isInUse else {
      return try withUnsafeTemporaryAllocation(byteCount: max(byteCount, 1), alignment: alignment) { buffer in
        try body(buffer.baseAddress.unsafelyUnwrapped)
      }
    }
    if header.pointee.byteCount < byteCount || header.pointee.bytes == nil {
      header.pointee.bytes?.deallocate()
      header.pointee.bytes = .allocate(byteCount: max(byteCount, 1), alignment: alignment)
      header.pointee.byteCount = byteCount
    }
    header.pointee.isInUse = true
    defer { header.pointee.isInUse = false }
    return try body(header.pointee.bytes.unsafelyUnwrapped)
  }

  /// The calling thread's header, made on its first request.
  @usableFromInline static func currentHeader() -> UnsafeMutablePointer<Header> {
    if let existing = pthread_getspecific(key) { return existing.assumingMemoryBound(to: Header.self) }
    let header = UnsafeMutablePointer<Header>.allocate(capacity: 1)
    header.initialize(to: Header(bytes: nil, byteCount: 0, isInUse: false))
    pthread_setspecific(key, header)
    return header
  }
}
