// Python's heapq (CPython 2.7 heapq.py / _heapq.c) over a std::vector, step for step, so that a
// container built on it keeps the items the original keeps when scores tie. brain_coder's
// MaxUniquePriorityQueue (the PQT top-k queue, spec §5.4, and the GA hall of fame, §6.5) is a
// heapq min-heap of MPQItemContainer entries whose __cmp__ compares the score alone: equal
// scores are "equal", and which of them is the root (and so the next to be popped) depends only
// on the order of the pushes. A sorted container with any tie-break rule would keep other items.
//
// * `less(a, b)` is the strict order heapq uses (cmp_lt); for scores, a.score < b.score.
// * py_heappush: append, then _siftdown from the new leaf.
// * py_heappushpop: if the heap is non-empty and its root is less than `item`, the two trade
//   places and the new root sifts up (_siftup: the smaller child moves up, the right one when
//   the two are equal, to a leaf, then _siftdown); `item` is then the popped root. Otherwise
//   nothing changes (a tie with the root discards the new item).
// * py_nlargest_order: the order heapq.nlargest(len(heap), heap) gives, i.e. sorted(heap,
//   reverse=True): by score, highest first, equal items in heap-array order (a stable sort).
// * Pushing a valid heap's items, in array order, into an empty heap gives the same array
//   again (each new leaf is never less than its parent), so a heap is saved by its array.
//
// Header-only, no state; the caller owns the vector and its thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace ringrl {

namespace py_heapq_detail {

/// heapq._siftdown: the item at `pos` moves towards `start` past every parent it is less than.
template <class T, class Less>
void siftdown(std::vector<T>& heap, std::size_t start, std::size_t pos, Less less) {
  T item = std::move(heap[pos]);
  while (pos > start) {
    const std::size_t parent = (pos - 1) >> 1;
    if (!less(item, heap[parent])) break;
    heap[pos] = std::move(heap[parent]);
    pos = parent;
  }
  heap[pos] = std::move(item);
}

/// heapq._siftup: the smaller child (the right one unless the left is less) moves up until
/// `pos` is a leaf; the item sits there and sifts down towards the start again.
template <class T, class Less>
void siftup(std::vector<T>& heap, std::size_t pos, Less less) {
  const std::size_t end = heap.size(), start = pos;
  T item = std::move(heap[pos]);
  std::size_t child = 2 * pos + 1;
  while (child < end) {
    const std::size_t right = child + 1;
    if (right < end && !less(heap[child], heap[right])) child = right;
    heap[pos] = std::move(heap[child]);
    pos = child;
    child = 2 * pos + 1;
  }
  heap[pos] = std::move(item);
  siftdown(heap, start, pos, less);
}

}  // namespace py_heapq_detail

/// heapq.heappush.
template <class T, class Less>
void py_heappush(std::vector<T>& heap, T item, Less less) {
  heap.push_back(std::move(item));
  py_heapq_detail::siftdown(heap, 0, heap.size() - 1, less);
}

/// heapq.heappushpop: returns true when `item` entered the heap; `item` then holds the root it
/// displaced. False: the heap is empty or its root is not less than `item` (unchanged).
template <class T, class Less>
bool py_heappushpop(std::vector<T>& heap, T& item, Less less) {
  if (heap.empty() || !less(heap.front(), item)) return false;
  std::swap(item, heap.front());
  py_heapq_detail::siftup(heap, 0, less);
  return true;
}

/// The indices of `heap` in heapq.nlargest(len(heap), heap) order (see the file comment).
template <class T, class Less>
std::vector<std::size_t> py_nlargest_order(const std::vector<T>& heap, Less less) {
  std::vector<std::size_t> order(heap.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return less(heap[b], heap[a]); });
  return order;
}

}  // namespace ringrl
