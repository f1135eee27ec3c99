import Dispatch

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Runs independent work items on up to `threadCount` threads.
///
/// Each worker claims the next unclaimed item under a mutex, so a worker whose core is busy with
/// another process simply claims fewer items instead of holding back the others. The worker index
/// passed to the body is stable for the whole call, so callers can give each worker its own
/// scratch memory. Nothing is allocated on the heap: the claim counter lives on the stack.
@usableFromInline package enum ParallelWork {
  /// Calls `body(item, worker)` once for every item in `0..<itemCount`.
  @usableFromInline package static func run(itemCount: Int, threadCount: Int, _ body: (_ item: Int, _ worker: Int) -> Void) {
    let workerCount = min(threadCount, itemCount)
    if workerCount <= 1 {
      for item in 0..<itemCount { body(item, 0) }
      return
    }
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

/// What the workers of one `ParallelWork.run` call share.
/// `@unchecked Sendable`: the counter is only touched under the mutex, and the body writes disjoint outputs per item.
@usableFromInline internal struct WorkerShared: @unchecked Sendable {
  @usableFromInline let body: (Int, Int) -> Void
  let mutex: UnsafeMutablePointer<pthread_mutex_t>
  let counter: UnsafeMutablePointer<Int>
  let itemCount: Int

  /// The next unclaimed item, or nil when all are taken.
  @usableFromInline func claim() -> Int? {
    pthread_mutex_lock(mutex)
    let item = counter.pointee
    if item < itemCount { counter.pointee = item + 1 }
    pthread_mutex_unlock(mutex)
    return item < itemCount ? item : nil
  }
}
