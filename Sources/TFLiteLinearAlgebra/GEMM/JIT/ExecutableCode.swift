// Executable memory for the run-time generated kernels, under W^X: code is written into a fresh
// read-write mapping, which is then switched to read+execute with `mprotect`, so no page is ever
// writable and executable at once and the code cannot change afterwards. A family of kernels made
// together (every tile height of a GEMM, every output type of a requantization) shares one
// mapping: one `mmap` and one `mprotect` for all of them, each kernel starting on a 64-byte
// boundary, instead of a mapping (and at least a page) per kernel. Kernels made one at a time on
// first use (`LazyExecutableKernels`) get a mapping each: a mapping cannot grow, because its pages
// would have to turn writable again while other threads run the kernels already in it. So the
// kernels a network will run, where its prepares can tell (`LazyExecutableKernels.reserve`), are
// generated at prepare and mapped together, all nodes' at once, at the end of `allocateTensors()`.
//
// The code cache is bounded. Every generator keeps its kernels in families made once per process
// and keyed only by finite sets (instruction set, output type, element kind, operation, and for
// the four-tap depthwise kernels a small shape class: filter rows 1–7, stride 1–4), never by a
// model's sizes, so the number of kernels is fixed by the code, not by the models run: all of
// them for every instruction set this machine runs fit in a few hundred KiB
// (`ExecutableCodeBoundTests`). On top of that, `ExecutableCode.budgetBytes` caps the executable
// bytes mapped at once for the whole process: a mapping past it is refused like one the OS refuses
// (the Swift kernels run, or prepare throws), so no future per-shape kernel can grow the cache
// without bound either. Nothing is evicted: a mapping lives until the last `ExecutableCode` in it
// is released, so code a kernel still holds is never unmapped.

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Machine code made executable under W^X (see the file comment), alone or in a shared mapping.
///
/// Only where run-time code generation is allowed: x86-64 Linux, macOS and other Unix systems.
/// iOS, tvOS, watchOS and visionOS forbid it for ordinary apps, and there, as on every other
/// architecture, nothing is mapped and the Swift kernels run.
@usableFromInline package final class ExecutableCode: @unchecked Sendable {
  // @unchecked Sendable: the mapping is immutable (read+execute) once made.

  /// The first instruction.
  @usableFromInline package let entry: UnsafeRawPointer
  /// The mapping holding the code, shared with the kernels mapped beside it.
  private let mapping: ExecutableMapping

  /// Copies `code` into a mapping of its own; nil when the platform or the OS refuses.
  @usableFromInline package convenience init?(_ code: [UInt8]) {
    guard let mapping = ExecutableMapping([code]) else { return nil }
    self.init(entry: mapping.entries[0], mapping: mapping)
  }

  private init(entry: UnsafeRawPointer, mapping: ExecutableMapping) {
    self.entry = entry
    self.mapping = mapping
  }

  /// Copies every code of `codes` into one shared mapping, in order; nil when one is empty, the
  /// mapping would pass `budgetBytes`, or the platform or the OS refuses.
  @usableFromInline package static func mapped(_ codes: [[UInt8]]) -> [ExecutableCode]? {
    guard let mapping = ExecutableMapping(codes) else { return nil }
    return mapping.entries.map { ExecutableCode(entry: $0, mapping: mapping) }
  }

  /// The most executable bytes (whole pages) mapped at once in the process: 16 MiB, about 37 times
  /// what every kernel family of every instruction set takes together (440 KiB in 39 mappings on
  /// an AVX-512 VNNI machine).
  package static let budgetBytes = 1 << 24

  /// Executable bytes (whole pages) mapped now, and in how many mappings.
  package static var mappedNow: (bytes: Int, mappings: Int) { ExecutableBudget.shared.usage }

  /// Mappings released so far in the process: a kernel refused while it was smaller is worth
  /// trying again (`LazyExecutableKernels`). Read without the lock, as an aligned word.
  package static var releasedMappings: Int { ExecutableBudget.shared.releases.pointee }
}

/// The process's account of mapped executable pages, kept under a mutex: mappings are made at
/// prepare (rarely, each family once) and released only when their last kernel goes.
private final class ExecutableBudget: @unchecked Sendable {
  // @unchecked Sendable: `bytes` and `mappings` are only touched under `mutex`.

  /// The account every mapping draws on.
  static let shared = ExecutableBudget()

  private let mutex: UnsafeMutablePointer<pthread_mutex_t>
  private var bytes = 0
  private var mappings = 0
  /// Mappings released so far; written under `mutex`, read without it (see `releasedMappings`).
  let releases: UnsafeMutablePointer<Int>

  private init() {
    mutex = .allocate(capacity: 1)
    pthread_mutex_init(mutex, nil)
    releases = .allocate(capacity: 1)
    releases.initialize(to: 0)
  }

  /// Executable bytes mapped now and in how many mappings.
  var usage: (bytes: Int, mappings: Int) {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return (bytes, mappings)
  }

  /// Books `count` more bytes; false (nothing booked) when that would pass `ExecutableCode.budgetBytes`.
  func reserve(_ count: Int) -> Bool {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    guard count <= ExecutableCode.budgetBytes - bytes else { return false }
    bytes += count
    mappings += 1
    return true
  }

  /// Returns `count` bytes booked by `reserve`.
  func release(_ count: Int) {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    bytes -= count
    mappings -= 1
    releases.pointee += 1
  }
}

/// Whole pages holding one or more kernels, read+execute from the end of `init` until the last
/// `ExecutableCode` in them is released.
private final class ExecutableMapping {
  /// Where each kernel starts (64-byte aligned), in the order given.
  let entries: [UnsafeRawPointer]
  /// The first page.
  private let base: UnsafeMutableRawPointer
  /// Size of the mapping in bytes (whole pages).
  private let mappedBytes: Int

  /// Bytes between consecutive kernels' starts are rounded up to this (a cache line).
  private static let kernelAlignment = 64

  /// Maps `codes` one after the other; nil when a code is empty, their total exceeds 16 MiB or what
  /// is left of `ExecutableCode.budgetBytes`, or the platform or the OS refuses.
  init?(_ codes: [[UInt8]]) {
    #if arch(x86_64) && !(os(iOS) || os(tvOS) || os(watchOS) || os(visionOS))
      let pageSize = max(Int(sysconf(Int32(_SC_PAGESIZE))), 4096)
      guard !codes.isEmpty, codes.allSatisfy({ !$0.isEmpty && $0.count <= 1 << 24 }) else { return nil }
      var offsets: [Int] = []
      var end = 0
      for code in codes {
        offsets.append(end)
        end += (code.count + Self.kernelAlignment - 1) / Self.kernelAlignment * Self.kernelAlignment
      }
      guard end <= 1 << 24 else { return nil }
      let bytes = (end + pageSize - 1) / pageSize * pageSize
      guard ExecutableBudget.shared.reserve(bytes) else { return nil }
      #if canImport(Darwin)
        let flags = MAP_PRIVATE | MAP_ANON
      #else
        let flags = MAP_PRIVATE | MAP_ANONYMOUS
      #endif
      guard let mapping = mmap(nil, bytes, PROT_READ | PROT_WRITE, flags, -1, 0), mapping != MAP_FAILED else {
        ExecutableBudget.shared.release(bytes)
        return nil
      }
      for (code, offset) in zip(codes, offsets) {
        code.withUnsafeBytes { (mapping + offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
      }
      guard mprotect(mapping, bytes, PROT_READ | PROT_EXEC) == 0 else {
        munmap(mapping, bytes)
        ExecutableBudget.shared.release(bytes)
        return nil
      }
      base = mapping
      mappedBytes = bytes
      entries = offsets.map { UnsafeRawPointer(mapping + $0) }
    #else
      return nil
    #endif
  }

  deinit {
    #if arch(x86_64) && !(os(iOS) || os(tvOS) || os(watchOS) || os(visionOS))
      munmap(base, mappedBytes)
      ExecutableBudget.shared.release(mappedBytes)
    #endif
  }
}

/// A fixed number of kernels, each generated and mapped the first time it is asked for and kept
/// for the life of the object, so that a model pays only for the kernels it runs (a float GEMM
/// tile height, a depthwise kind) instead of generating a whole family up front.
///
/// `entry(_:)` is meant for hot paths: once a kernel exists, asking for it again is one load of its
/// entry pointer and no lock. The first request takes the process's kernel lock, generates and maps
/// the kernel and publishes its entry; a request racing with that first one either sees the entry
/// (an aligned pointer-sized store, and on x86-64, the only architecture with generated code,
/// stores are not reordered with the earlier ones that wrote and protected the code) or sees none
/// and waits for the lock.
///
/// Batched mappings: a prepare that knows which kernels its node will run lists them with
/// `reserve(_:)`, which generates their code but maps nothing yet. `mapReserved()` (the end of
/// `allocateTensors()`), or the first request of any reserved kernel, maps every kernel reserved
/// in the process so far, of every table, into one shared mapping: written whole, then made
/// read+execute with one `mprotect` (W^X kept), instead of one `mmap` + `mprotect` (and a page)
/// per kernel. When that mapping is refused nothing is published and each kernel is made on its
/// own at its first request, as without a reservation.
///
/// A kernel that does not exist is settled for good (nil, no lock). A kernel whose mapping the OS
/// or the code budget refused gives nil without a lock until some executable mapping of the
/// process is released (`ExecutableCode.releasedMappings`), and is then tried once more: callers
/// run their Swift kernel meanwhile, so a refusal never stops the process nor poisons it.
@usableFromInline package final class LazyExecutableKernels: @unchecked Sendable {
  // @unchecked Sendable: `executables`, `reserved` and `reservedCount` are used only under
  // `ReservedKernels.shared.mutex`; the `entries`, `settled` and `refusedAt` slots are written
  // under it and read as described above.

  /// The entry of each kernel made so far (nil: not made, or the OS refused it).
  @usableFromInline let entries: UnsafeMutablePointer<UnsafeRawPointer?>
  /// True for each kernel made or found not to exist, set after its entry is published, so that
  /// asking again for a kernel that does not exist takes no lock either.
  @usableFromInline let settled: UnsafeMutablePointer<Bool>
  /// For each kernel whose mapping was refused, `ExecutableCode.releasedMappings` at the refusal
  /// (−1: never refused); it is tried again once that count has moved on.
  private let refusedAt: UnsafeMutablePointer<Int>
  /// The kernels made so far, which own the mappings `entries` point into.
  private var executables: [ExecutableCode?]
  /// The code of each reserved kernel not yet mapped (empty: none; generated code never is).
  private var reserved: [[UInt8]]
  /// How many kernels of `reserved` hold code.
  private var reservedCount = 0
  /// Generates the code of kernel `index`; nil when there is no such kernel.
  private let generate: (Int) -> [UInt8]?

  /// `count` kernels, none made yet; `generate(index)` gives the code of kernel `index` (nil when
  /// there is none), called once per index (again only after a refused mapping).
  package init(count: Int, generate: @escaping (Int) -> [UInt8]?) {
    entries = .allocate(capacity: count)
    entries.initialize(repeating: nil, count: count)
    settled = .allocate(capacity: count)
    settled.initialize(repeating: false, count: count)
    refusedAt = .allocate(capacity: count)
    refusedAt.initialize(repeating: -1, count: count)
    executables = Array(repeating: nil, count: count)
    reserved = Array(repeating: [], count: count)
    self.generate = generate
  }

  deinit {
    entries.deallocate()
    settled.deallocate()
    refusedAt.deallocate()
  }

  /// The first instruction of kernel `index`, generated on the first request; nil when there is
  /// no such kernel or the OS (or the code budget) refuses executable memory for it.
  @inlinable package func entry(_ index: Int) -> UnsafeRawPointer? {
    if let entry = entries[index] { return entry }
    return settled[index] ? nil : makeEntry(index)
  }

  /// `entry(index)`'s slow path: maps the process's reserved kernels if there are any (kernel
  /// `index` may be one of them), else generates and maps kernel `index` alone, once, or once
  /// more after a refusal when a mapping has been released since.
  @usableFromInline func makeEntry(_ index: Int) -> UnsafeRawPointer? {
    let releases = ExecutableCode.releasedMappings
    if refusedAt[index] == releases { return nil }
    let batch = ReservedKernels.shared
    pthread_mutex_lock(batch.mutex)
    defer { pthread_mutex_unlock(batch.mutex) }
    batch.mapLocked()
    guard !settled[index], refusedAt[index] != releases else { return entries[index] }
    guard let code = generate(index) else {
      settled[index] = true
      return nil
    }
    guard let executable = ExecutableCode(code) else {
      refusedAt[index] = releases
      return nil
    }
    publish(executable, at: index)
    return entries[index]
  }

  /// Generates the code of the kernels `indices` not made yet (nor refused since the last
  /// released mapping), to be mapped together with every other reserved kernel of the process by
  /// `mapReserved()` or the first request of one of them. Only generates: maps nothing.
  package func reserve(_ indices: some Sequence<Int>) {
    let releases = ExecutableCode.releasedMappings
    let batch = ReservedKernels.shared
    pthread_mutex_lock(batch.mutex)
    defer { pthread_mutex_unlock(batch.mutex) }
    for index in indices where !settled[index] && reserved[index].isEmpty && refusedAt[index] != releases {
      guard let code = generate(index), !code.isEmpty else {
        settled[index] = true
        continue
      }
      if reservedCount == 0 { batch.tables.append(self) }
      reserved[index] = code
      reservedCount += 1
    }
  }

  /// Maps every kernel reserved in the process and not yet mapped, of every table, into one
  /// mapping (see the type's documentation); when it is refused, each is made at its first request.
  package static func mapReserved() {
    let batch = ReservedKernels.shared
    pthread_mutex_lock(batch.mutex)
    defer { pthread_mutex_unlock(batch.mutex) }
    batch.mapLocked()
  }

  /// True when kernel `index` has been made (a test's view; hot paths call `entry`).
  package func isMade(_ index: Int) -> Bool {
    let batch = ReservedKernels.shared
    pthread_mutex_lock(batch.mutex)
    defer { pthread_mutex_unlock(batch.mutex) }
    return executables[index] != nil
  }

  /// True when kernel `index` is reserved and waits for its mapping (a test's view).
  package func isReserved(_ index: Int) -> Bool {
    let batch = ReservedKernels.shared
    pthread_mutex_lock(batch.mutex)
    defer { pthread_mutex_unlock(batch.mutex) }
    return !reserved[index].isEmpty
  }

  /// Makes `executable` kernel `index`'s code; under the lock.
  fileprivate func publish(_ executable: ExecutableCode, at index: Int) {
    executables[index] = executable
    entries[index] = executable.entry
    settled[index] = true
  }

  /// Appends the code of every reserved kernel to `codes`, in index order; under the lock.
  fileprivate func appendReserved(to codes: inout [[UInt8]]) {
    for index in reserved.indices where !reserved[index].isEmpty { codes.append(reserved[index]) }
  }

  /// Publishes `mapped[start...]` as the reserved kernels, in the order `appendReserved` gave
  /// them (nil: the mapping was refused), and clears the reservations; returns how many it took.
  fileprivate func takeReserved(_ mapped: [ExecutableCode]?, from start: Int) -> Int {
    var next = start
    for index in reserved.indices where !reserved[index].isEmpty {
      if let mapped { publish(mapped[next], at: index) }
      reserved[index] = []
      next += 1
    }
    reservedCount = 0
    return next - start
  }
}

/// The process's lock for every `LazyExecutableKernels` slow path, and the tables with reserved
/// kernels waiting for their shared mapping. One lock for all tables: first requests are rare
/// (each kernel once per process), and mapping one batch across tables needs them all at once.
private final class ReservedKernels: @unchecked Sendable {
  // @unchecked Sendable: `tables` is only touched under `mutex`.

  /// The batch of the process.
  static let shared = ReservedKernels()

  /// Guards `tables` and every table's slow path; recursive, so that a generator that asks for
  /// another table's kernel cannot deadlock.
  let mutex: UnsafeMutablePointer<pthread_mutex_t>
  /// The tables holding reserved kernels, in the order they reserved them.
  var tables: [LazyExecutableKernels] = []

  private init() {
    mutex = .allocate(capacity: 1)
    var attributes = pthread_mutexattr_t()
    pthread_mutexattr_init(&attributes)
    pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
    pthread_mutex_init(mutex, &attributes)
    pthread_mutexattr_destroy(&attributes)
  }

  /// Maps every reserved kernel in one mapping and publishes them (or, refused, drops the
  /// reservations); under `mutex`.
  func mapLocked() {
    guard !tables.isEmpty else { return }
    let waiting = tables
    tables = []
    var codes: [[UInt8]] = []
    for table in waiting { table.appendReserved(to: &codes) }
    let mapped = ExecutableCode.mapped(codes)
    var start = 0
    for table in waiting { start += table.takeReserved(mapped, from: start) }
  }
}
