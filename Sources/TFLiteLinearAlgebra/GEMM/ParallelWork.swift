// Splitting independent work items over threads.
//
// Semantics: `ParallelWork.run(itemCount:threadCount:_:)` calls the body once for every item, on the
// calling thread and up to `threadCount − 1` helper threads, and returns when every call has
// returned. Items are claimed one at a time from a shared counter, so which thread runs an item is
// not fixed; the worker index (0 for the caller) is stable for the whole call and below
// `threadCount`, for per-worker scratch. With one thread (or one item) the items run inline with
// no synchronization at all.
//
// On the helpers each worker first claims from its own share, a contiguous run of the items (the
// caller the first, the first helper to join the second, ...), and only then from the others'
// shares, front first. Kernels cut their output into items in memory order, so one node's share
// on a core is mostly what the next node reads on that core: the data stays in that core's cache
// instead of crossing to the other (a serial claim order dealt neighbouring items to both). A
// worker that does not come in time has its share claimed by the others.
//
// Helpers are persistent: `HelperThreads` keeps them for the process's life. After a call they
// spin on an atomic counter for a short while before sleeping, so the next call (the next node of
// an invoke, microseconds later) finds them awake instead of paying a kernel wake-up, as XNNPACK's
// pthreadpool does. The caller never waits for a helper to wake: it runs items itself, then closes
// the call and waits only for the helpers that joined in time to finish their current item. When
// the helpers are already serving another call (another interpreter on another thread, or a
// nested call), the work goes to Dispatch's `concurrentPerform` instead.

import Dispatch

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif
#if canImport(Synchronization)
  import Synchronization
#endif

/// Runs independent work items on up to `threadCount` threads.
///
/// Each worker claims the next unclaimed item, so a worker whose core is busy with another process
/// simply claims fewer items instead of holding back the others. The worker index passed to the
/// body is stable for the whole call, so callers can give each worker its own scratch memory.
@usableFromInline package enum ParallelWork {
  /// Calls `body(item, worker)` once for every item in `0..<itemCount`.
  @usableFromInline package static func run(itemCount: Int, threadCount: Int, _ body: (_ item: Int, _ worker: Int) -> Void) {
    let workerCount = min(threadCount, itemCount)
    if workerCount <= 1 {
      for item in 0..<itemCount { body(item, 0) }
      return
    }
    #if canImport(Synchronization)
      if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *),
        HelperThreads.shared.run(itemCount: itemCount, workerCount: workerCount, body)
      {
        return
      }
    #endif
    runOnDispatch(itemCount: itemCount, workerCount: workerCount, body)
  }

  /// How many equal items to cut work into for `threadCount` threads: `wanted`, but no more than
  /// `affordable` (items below a worthwhile size), rounded down to a multiple of the thread count
  /// once there are at least as many items as threads (three equal items on two threads leave one
  /// thread idle for a third of the time; two or four do not); 1 with one thread.
  @inlinable package static func balancedItemCount(wanted: Int, affordable: Int, threadCount: Int) -> Int {
    let items = min(wanted, affordable)
    guard threadCount > 1, items > 1 else { return 1 }
    return items >= threadCount ? items - items % threadCount : items
  }

  /// The fallback: Dispatch's thread pool, items claimed under a mutex. Nothing is allocated on
  /// the heap: the claim counter lives on the stack.
  static func runOnDispatch(itemCount: Int, workerCount: Int, _ body: (_ item: Int, _ worker: Int) -> Void) {
    withoutActuallyEscaping(body) { escapableBody in
      withUnsafeTemporaryAllocation(of: pthread_mutex_t.self, capacity: 1) { mutexBuffer in
        withUnsafeTemporaryAllocation(of: Int.self, capacity: 1) { counterBuffer in
          guard let mutex = mutexBuffer.baseAddress, let counter = counterBuffer.baseAddress else { return }
          pthread_mutex_init(mutex, nil)
          counter.initialize(to: 0)
          let shared = WorkerShared(body: escapableBody, mutex: mutex, counter: counter, itemCount: itemCount)
          DispatchQueue.concurrentPerform(iterations: workerCount) { worker in
            while let item = shared.claim() { shared.body(item, worker) }
          }
          pthread_mutex_destroy(mutex)
        }
      }
    }
  }
}

/// What the workers of one Dispatch-run `ParallelWork.run` call share.
/// `@unchecked Sendable`: the counter is only touched under the mutex, and the body writes disjoint outputs per item.
internal struct WorkerShared: @unchecked Sendable {
  let body: (Int, Int) -> Void
  let mutex: UnsafeMutablePointer<pthread_mutex_t>
  let counter: UnsafeMutablePointer<Int>
  let itemCount: Int

  /// The next unclaimed item, or nil when all are taken.
  func claim() -> Int? {
    pthread_mutex_lock(mutex)
    let item = counter.pointee
    if item < itemCount { counter.pointee = item + 1 }
    pthread_mutex_unlock(mutex)
    return item < itemCount ? item : nil
  }
}

#if canImport(Synchronization)
  /// The process's persistent helper threads and the one call they serve at a time.
  ///
  /// A call publishes its job (body, item count, how many helpers may join), opens it (`isClosed`
  /// false) and bumps `generation`; helpers see the bump while spinning, or are woken from the
  /// condition variable. A helper joins by raising `active` and then checking that the call is
  /// still open (sequentially consistent on both sides, so the caller closing the call either sees
  /// the helper in `active` or the helper sees the call closed), takes the next ticket as its
  /// worker index (refused beyond the call's helper limit), claims items from its share's counter
  /// in `nextItems`, then from the other shares' counters, until none are left and leaves by
  /// lowering `active`. The caller claims items too, then closes the call
  /// and waits for `active` to fall to zero.
  ///
  /// `@unchecked Sendable`: the job fields are written only by the caller holding `isBusy` while
  /// the call is closed and no helper is active, and read by helpers only while active in an open call.
  @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
  final class HelperThreads: @unchecked Sendable {
    /// The helpers every caller shares.
    static let shared = HelperThreads()
    /// How long an idle helper keeps spinning before it sleeps (nanoseconds).
    static let spinNanoseconds = 200_000
    /// The most helpers started (threads beyond this many are served by Dispatch).
    static let maximumHelpers = 63

    /// True while a call owns the helpers.
    private let isBusy = Atomic<Bool>(false)
    /// Bumped by every call; idle helpers wait for it to change.
    private let generation = Atomic<Int>(0)
    /// False while the current call accepts helpers.
    private let isClosed = Atomic<Bool>(true)
    /// Helpers inside the current call (or checking whether they may enter).
    private let active = Atomic<Int>(0)
    /// Worker indices handed out in the current call.
    private let tickets = Atomic<Int>(0)
    /// Per worker of the current call, the next unclaimed item of its share, one cache line each.
    private let nextItems: UnsafeMutableRawPointer
    /// Bytes between two workers' `nextItems` counters (a cache line, so claims do not collide).
    private static let counterStride = 64
    /// Helpers asleep on `wakeUp` (or about to be).
    private let sleepers = Atomic<Int>(0)
    /// Guards the sleep on `wakeUp`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Wakes sleeping helpers when a call is published.
    private let wakeUp: UnsafeMutablePointer<pthread_cond_t>
    /// Helper threads started so far (changed only by the caller holding `isBusy`).
    private var startedHelpers = 0
    /// The current call's body (valid while the call is open or a helper is active).
    private var body: ((Int, Int) -> Void)?
    /// The current call's item count.
    private var itemCount = 0
    /// How many helpers may join the current call (workers − 1).
    private var helperLimit = 0
    /// How many shares the current call's items are dealt into (the caller and `helperLimit` helpers).
    private var shareCount = 1

    private init() {
      mutex = .allocate(capacity: 1)
      wakeUp = .allocate(capacity: 1)
      pthread_mutex_init(mutex, nil)
      pthread_cond_init(wakeUp, nil)
      nextItems = .allocate(byteCount: (Self.maximumHelpers + 1) * Self.counterStride, alignment: Self.counterStride)
      for worker in 0...Self.maximumHelpers { counter(worker).initialize(to: Atomic<Int>(0)) }
    }

    /// Worker `worker`'s claim counter.
    private func counter(_ worker: Int) -> UnsafeMutablePointer<Atomic<Int>> {
      (nextItems + worker &* Self.counterStride).assumingMemoryBound(to: Atomic<Int>.self)
    }

    /// The first item of share `share` (the end of share `share − 1`).
    private func shareStart(_ share: Int) -> Int { share &* itemCount / shareCount }

    /// Runs the items on the caller and up to `workerCount − 1` helpers; false (nothing run) when
    /// the helpers serve another call or none can be started.
    func run(itemCount: Int, workerCount: Int, _ body: (_ item: Int, _ worker: Int) -> Void) -> Bool {
      guard isBusy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return false }
      defer { isBusy.store(false, ordering: .releasing) }
      let helpers = min(workerCount - 1, Self.maximumHelpers)
      while startedHelpers < helpers, startHelper() { startedHelpers += 1 }
      guard startedHelpers > 0 else { return false }
      withoutActuallyEscaping(body) { escapableBody in
        self.body = escapableBody
        self.itemCount = itemCount
        helperLimit = min(helpers, startedHelpers)
        shareCount = helperLimit + 1
        for share in 0..<shareCount { counter(share).pointee.store(shareStart(share), ordering: .relaxed) }
        tickets.store(0, ordering: .relaxed)
        isClosed.store(false, ordering: .sequentiallyConsistent)
        generation.add(1, ordering: .sequentiallyConsistent)
        if sleepers.load(ordering: .sequentiallyConsistent) > 0 {
          pthread_mutex_lock(mutex)
          pthread_cond_broadcast(wakeUp)
          pthread_mutex_unlock(mutex)
        }
        runItems(worker: 0)
        isClosed.store(true, ordering: .sequentiallyConsistent)
        var spins = 0
        while active.load(ordering: .sequentiallyConsistent) != 0 { Self.pause(&spins) }
        self.body = nil
      }
      return true
    }

    /// Claims and runs items of the current call until none are left: those of the worker's own
    /// share first, then those of the following shares, wrapping around.
    private func runItems(worker: Int) {
      guard let body else { return }
      for step in 0..<shareCount {
        let share = (worker &+ step) % shareCount
        let end = shareStart(share &+ 1)
        while true {
          let item = counter(share).pointee.add(1, ordering: .relaxed).oldValue
          guard item < end else { break }
          body(item, worker)
        }
      }
    }

    /// A helper's life: wait for a call, join it if it is still open and not full, run items,
    /// leave; forever.
    fileprivate func helperLoop() {
      var seen = generation.load(ordering: .acquiring)
      while true {
        seen = waitForCall(after: seen)
        active.add(1, ordering: .sequentiallyConsistent)
        if !isClosed.load(ordering: .sequentiallyConsistent) {
          let worker = tickets.add(1, ordering: .relaxed).newValue
          if worker <= helperLimit { runItems(worker: worker) }
        }
        active.subtract(1, ordering: .sequentiallyConsistent)
      }
    }

    /// Spins up to `spinNanoseconds` for `generation` to move past `seen`, then sleeps until it does.
    private func waitForCall(after seen: Int) -> Int {
      let deadline = Self.monotonicNanoseconds() &+ Self.spinNanoseconds
      var spins = 0
      while true {
        let current = generation.load(ordering: .acquiring)
        if current != seen { return current }
        Self.pause(&spins)
        if spins & 1023 == 0 && Self.monotonicNanoseconds() > deadline { break }
      }
      pthread_mutex_lock(mutex)
      sleepers.add(1, ordering: .sequentiallyConsistent)
      var current = generation.load(ordering: .sequentiallyConsistent)
      while current == seen {
        pthread_cond_wait(wakeUp, mutex)
        current = generation.load(ordering: .sequentiallyConsistent)
      }
      sleepers.subtract(1, ordering: .relaxed)
      pthread_mutex_unlock(mutex)
      return current
    }

    /// Starts one detached helper thread; false when the system refuses (or has no pthreads here).
    private func startHelper() -> Bool {
      let context = Unmanaged.passUnretained(self).toOpaque()
      #if canImport(Darwin)
        var thread: pthread_t?
        let started = pthread_create(&thread, nil, { context in
          Unmanaged<HelperThreads>.fromOpaque(context).takeUnretainedValue().helperLoop()
          return nil
        }, context)
        guard started == 0, let thread else { return false }
        pthread_detach(thread)
        return true
      #elseif canImport(Glibc)
        var thread = pthread_t()
        let started = pthread_create(&thread, nil, { context in
          if let context { Unmanaged<HelperThreads>.fromOpaque(context).takeUnretainedValue().helperLoop() }
          return nil
        }, context)
        guard started == 0 else { return false }
        pthread_detach(thread)
        return true
      #else
        return false
      #endif
    }

    /// One turn of a spin loop: every 1024th turn yields the core, so that on a machine with more
    /// runnable threads than cores a spinning thread does not hold up the one it waits for (a
    /// preempted helper in the middle of an item, or another process).
    private static func pause(_ spins: inout Int) {
      spins &+= 1
      if spins & 1023 == 0 { sched_yield() }
    }

    /// The monotonic clock in nanoseconds.
    private static func monotonicNanoseconds() -> Int {
      var time = timespec()
      clock_gettime(CLOCK_MONOTONIC, &time)
      return Int(time.tv_sec) &* 1_000_000_000 &+ Int(time.tv_nsec)
    }
  }
#endif
