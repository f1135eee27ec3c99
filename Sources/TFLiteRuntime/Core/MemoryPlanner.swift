#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A block of activation memory the planner must place: live from `firstUse` to `lastUse` (node indices).
public struct MemoryRequest: Sendable, Hashable {
  /// What the block holds.
  public enum Owner: Sendable, Hashable {
    /// The data of the tensor with this index.
    case tensor(Int)
    /// The scratch memory of the node with this index.
    case scratch(node: Int)
  }
  /// What the block holds.
  public var owner: Owner
  /// Size in bytes.
  public var byteCount: Int
  /// The first node that writes or reads the block (−1 for graph inputs, written before the first node).
  public var firstUse: Int
  /// The last node that reads the block; the node count for graph outputs and graph inputs, which
  /// stay intact for the whole run (as in LiteRT, whose planner never frees a subgraph's inputs).
  public var lastUse: Int

  /// Creates a request.
  public init(owner: Owner, byteCount: Int, firstUse: Int, lastUse: Int) {
    self.owner = owner
    self.byteCount = byteCount
    self.firstUse = firstUse
    self.lastUse = lastUse
  }

  /// True when the two blocks are live at the same time.
  func overlapsInTime(_ other: MemoryRequest) -> Bool {
    firstUse <= other.lastUse && other.firstUse <= lastUse
  }
}

/// Where each block of a subgraph's activation memory lives in its arena.
public struct MemoryPlan: Sendable {
  /// The placed blocks with their byte offsets, in request order.
  public var placements: [(request: MemoryRequest, offset: Int)]
  /// Bytes of arena the plan needs.
  public var arenaByteCount: Int

  /// Alignment of every block's offset.
  public static let alignment = 64

  /// Places `requests` greedily, each at the lowest aligned offset that does not collide with an
  /// already placed block whose lifetime overlaps its own. The greedy pass is tried in a few
  /// orders — largest first; blocks live for the whole run first, then largest (LiteRT's order);
  /// largest lifetime × size first; earliest first — and the smallest arena is kept.
  public init(requests: [MemoryRequest]) {
    let span = (requests.map(\.firstUse).min() ?? 0, requests.map(\.lastUse).max() ?? 0)
    func area(_ request: MemoryRequest) -> Int { (request.lastUse - request.firstUse + 1) * Self.aligned(request.byteCount) }
    func wholeRun(_ request: MemoryRequest) -> Bool { request.firstUse == span.0 && request.lastUse == span.1 }
    let orders: [(MemoryRequest, MemoryRequest) -> Bool?] = [
      { $0.byteCount != $1.byteCount ? $0.byteCount > $1.byteCount : nil },
      { wholeRun($0) != wholeRun($1) ? wholeRun($0) : $0.byteCount != $1.byteCount ? $0.byteCount > $1.byteCount : nil },
      { area($0) != area($1) ? area($0) > area($1) : nil },
      { $0.firstUse != $1.firstUse ? $0.firstUse < $1.firstUse : $0.byteCount != $1.byteCount ? $0.byteCount > $1.byteCount : nil },
    ]
    var best: (offsets: [Int], arenaEnd: Int)?
    for precedes in orders {
      let order = requests.indices.sorted { a, b in
        precedes(requests[a], requests[b])
          ?? (requests[a].firstUse != requests[b].firstUse ? requests[a].firstUse < requests[b].firstUse : a < b)
      }
      let placed = Self.place(requests, in: order)
      if placed.arenaEnd < best?.arenaEnd ?? .max { best = placed }
    }
    let offsets = best?.offsets ?? []
    placements = requests.indices.map { (requests[$0], offsets[$0]) }
    arenaByteCount = best?.arenaEnd ?? 0
  }

  /// Places `requests` one by one in `order`, each at the lowest aligned offset clear of the
  /// placed blocks live at the same time; returns every block's offset and the arena's end.
  private static func place(_ requests: [MemoryRequest], in order: [Int]) -> (offsets: [Int], arenaEnd: Int) {
    var offsets = [Int](repeating: 0, count: requests.count)
    // The placed blocks by offset, so that each request walks the ones live with it in offset
    // order without building and sorting a list of them (at load, for every request and order).
    var placed: [Int] = []
    placed.reserveCapacity(order.count)
    var arenaEnd = 0
    for index in order {
      let request = requests[index]
      let size = aligned(request.byteCount)
      var candidate = 0
      for other in placed where requests[other].overlapsInTime(request) {
        if candidate + size <= offsets[other] { break }
        candidate = max(candidate, offsets[other] + aligned(requests[other].byteCount))
      }
      offsets[index] = candidate
      placed.insert(index, at: placed.firstIndex { offsets[$0] > candidate } ?? placed.count)
      arenaEnd = max(arenaEnd, candidate + size)
    }
    return (offsets, arenaEnd)
  }

  /// `bytes` rounded up to the block alignment.
  static func aligned(_ bytes: Int) -> Int { (bytes + alignment - 1) / alignment * alignment }

  /// The lower bound any plan must reach: the largest total of blocks live at one node.
  public var peakLiveByteCount: Int {
    let requests = placements.map(\.request)
    guard let first = requests.map(\.firstUse).min(), let last = requests.map(\.lastUse).max() else { return 0 }
    return (first...last).map { step in
      requests.filter { $0.firstUse <= step && step <= $0.lastUse }.reduce(0) { $0 + Self.aligned($1.byteCount) }
    }.max() ?? 0
  }
}

/// The memory of one activation arena, 64-byte aligned. Arenas of ``mappingThreshold`` bytes or
/// more are mapped straight from the operating system, so that releasing one (a resize to smaller
/// shapes, a released interpreter) returns its pages at once, whatever the C allocator's own
/// thresholds for giving memory back; smaller ones come from the allocator.
final class ArenaMemory {
  /// The arena's bytes.
  let bytes: UnsafeMutableRawBufferPointer
  /// True when `bytes` is a mapping of its own (released with `munmap`).
  private let isMapped: Bool

  /// Arenas at least this large are mapped from the operating system.
  static let mappingThreshold = 128 << 10

  /// Gets `byteCount` bytes (at least 1).
  init(byteCount: Int) {
    let size = max(byteCount, 1)
    if size >= Self.mappingThreshold, let mapped = Self.map(size) {
      bytes = UnsafeMutableRawBufferPointer(start: mapped, count: size)
      isMapped = true
    } else {
      bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: MemoryPlan.alignment)
      isMapped = false
    }
  }

  deinit {
    if isMapped {
      #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        munmap(bytes.baseAddress, bytes.count)
      #endif
    } else {
      bytes.deallocate()
    }
  }

  /// A private anonymous read-write mapping of `size` bytes (page aligned), or nil where the
  /// platform has none or the system refuses.
  private static func map(_ size: Int) -> UnsafeMutableRawPointer? {
    #if canImport(Glibc) || canImport(Musl)
      let flags = MAP_PRIVATE | MAP_ANONYMOUS
    #elseif canImport(Darwin)
      let flags = MAP_PRIVATE | MAP_ANON
    #endif
    #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
      let address = mmap(nil, size, PROT_READ | PROT_WRITE, flags, -1, 0)
      return address == UnsafeMutableRawPointer(bitPattern: -1) ? nil : address
    #else
      return nil
    #endif
  }
}
