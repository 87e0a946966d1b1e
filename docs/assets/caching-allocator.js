/* Peak memory of PyTorch's CUDA caching allocator for a replayed allocation sequence,
 * so the calculator page can predict torch.cuda.max_memory_reserved() in the browser.
 *
 * A port of generator/allocator/caching.py (and blocks.py), which models
 * c10/cuda/CUDACachingAllocator.cpp, for its default configuration only: no capacity (so
 * no out-of-memory, and no segment is ever released), no expandable segments, no
 * max_split_size, no roundup_power2_divisions. Function names in the comments are those
 * of the C++ allocator; tests/unit/test_allocator_js.py checks this file against Python.
 *
 * replayPeaks(events): each v >= 0 allocates v bytes (allocations are numbered 0, 1, 2, …
 * in order); each v < 0 frees allocation number -v - 1. Returns the peaks in bytes,
 * {allocated, reserved}.
 *
 * Sizes are plain numbers, exact up to 2^53 bytes; no bit operations touch them, as those
 * would cut them to 32 bits.
 */
(function () {
  "use strict";

  const MiB = 1024 * 1024;
  const MIN_BLOCK_SIZE = 512; // kMinBlockSize: every block is a multiple of this
  const SMALL_SIZE = MiB; // kSmallSize: the largest request the small pool serves
  const SMALL_BUFFER = 2 * MiB; // kSmallBuffer: the segment size of the small pool
  const MIN_LARGE_ALLOC = 10 * MiB; // kMinLargeAlloc: smaller large requests share a segment
  const ROUND_LARGE = 2 * MiB; // kRoundLarge: larger requests get a segment rounded to this
  const LARGE_SEGMENT_SIZE = 20 * MiB; // large_segment_size()

  // round_size. Dividing by a power of two is exact in floating point, so ceil is too.
  function roundSize(nbytes) {
    if (nbytes < MIN_BLOCK_SIZE) return MIN_BLOCK_SIZE;
    return Math.ceil(nbytes / MIN_BLOCK_SIZE) * MIN_BLOCK_SIZE;
  }

  // get_allocation_size: small requests share 2 MiB, 1-10 MiB ones share 20 MiB (fewer
  // cudaMallocs, less fragmentation), larger ones get their own, rounded up to 2 MiB.
  function allocationSize(size) {
    if (size <= SMALL_SIZE) return SMALL_BUFFER;
    if (size < MIN_LARGE_ALLOC) return LARGE_SEGMENT_SIZE;
    return Math.ceil(size / ROUND_LARGE) * ROUND_LARGE;
  }

  // A BlockPool is an array of free blocks sorted as BlockComparatorSize sorts them, by
  // (size, address), so best fit is one binary search: the address breaks ties, which keeps
  // the choice among equal sizes the same as Python's and C++'s.
  function lowerBound(pool, size, addr) {
    let lo = 0, hi = pool.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1; // an index, not a size: small enough for bit operations
      const b = pool[mid];
      if (b.size < size || (b.size === size && b.addr < addr)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  function poolInsert(pool, block) {
    pool.splice(lowerBound(pool, block.size, block.addr), 0, block);
  }

  function poolRemove(pool, block) {
    const i = lowerBound(pool, block.size, block.addr);
    if (pool[i] !== block) throw new Error("caching allocator: free block not in its pool");
    pool.splice(i, 1);
  }

  // try_merge_blocks: absorb a free neighbour of the same segment.
  function tryMerge(dst, src) {
    if (src === null || src.allocated) return;
    poolRemove(src.pool, src);
    if (dst.prev === src) {
      dst.addr = src.addr;
      dst.prev = src.prev;
      if (src.prev !== null) src.prev.next = dst;
    } else {
      dst.next = src.next;
      if (src.next !== null) src.next.prev = dst;
    }
    dst.size += src.size;
  }

  function replayPeaks(events) {
    const small = [], large = [];
    const live = []; // by allocation number: its block, null for 0 bytes, undefined if freed
    // Made-up increasing segment addresses, as in Python: they only break ties.
    let nextAddress = 2 ** 32;
    let allocated = 0, reserved = 0, peakAllocated = 0, peakReserved = 0;

    function allocate(nbytes) {
      // Zero bytes never reach malloc (NativeCachingAllocator::allocate).
      if (nbytes === 0) { live.push(null); return; }
      const size = roundSize(nbytes);
      const pool = size <= SMALL_SIZE ? small : large;
      // get_free_block: best fit, the first block >= (size, 0) in (size, address) order.
      const i = lowerBound(pool, size, 0);
      let block;
      if (i < pool.length) {
        block = pool[i];
        pool.splice(i, 1);
      } else {
        // alloc_block: a new cudaMalloc segment; without a capacity it never fails, and
        // nothing is ever given back, so reserved only grows.
        const segment = allocationSize(size);
        reserved += segment;
        if (reserved > peakReserved) peakReserved = reserved;
        block = {addr: nextAddress, size: segment, pool, prev: null, next: null,
                 allocated: false};
        nextAddress += segment;
      }
      // should_split: large blocks split only when over 1 MiB would be left, so slivers
      // stay with the request (and count as allocated) instead of fragmenting the pool.
      const remaining = block.size - size;
      if (pool === small ? remaining >= MIN_BLOCK_SIZE : remaining > SMALL_SIZE) {
        // alloc_found_block: the request takes the head; the rest goes back to the pool.
        const head = {addr: block.addr, size, pool, prev: block.prev, next: block,
                      allocated: false};
        if (block.prev !== null) block.prev.next = head;
        block.prev = head;
        block.addr += size;
        block.size = remaining;
        poolInsert(pool, block);
        block = head;
      }
      block.allocated = true;
      // allocated_bytes counts the block, so an unsplit sliver counts too.
      allocated += block.size;
      if (allocated > peakAllocated) peakAllocated = allocated;
      live.push(block);
    }

    // free_block: back to its pool, merged with free neighbours.
    function free(index) {
      const block = live[index];
      if (block === undefined) {
        throw new Error("caching allocator: free of allocation " + index + ", not live");
      }
      live[index] = undefined;
      if (block === null) return;
      block.allocated = false;
      allocated -= block.size;
      tryMerge(block, block.prev);
      tryMerge(block, block.next);
      poolInsert(block.pool, block);
    }

    for (const v of events) {
      if (v >= 0) allocate(v);
      else free(-v - 1);
    }
    return {allocated: peakAllocated, reserved: peakReserved};
  }

  if (typeof window !== "undefined") window.replayPeaks = replayPeaks;
  if (typeof module !== "undefined") module.exports = {replayPeaks};
})();
