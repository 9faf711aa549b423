/**
 * keepFirst keeps `first` as the `limit` items that come first by `order`, in
 * that order, as items are offered one at a time: `item` goes in its place if
 * it belongs among them, after any it ties with. Offering n items costs
 * O(n log limit) comparisons, never a sort of all of them.
 */
export function keepFirst<T>(first: T[], item: T, limit: number, order: (a: T, b: T) => number): void {
  if (limit <= 0 || (first.length >= limit && order(item, first[limit - 1]!) >= 0)) return;
  let lo = 0;
  let hi = first.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (order(first[mid]!, item) <= 0) lo = mid + 1;
    else hi = mid;
  }
  first.splice(lo, 0, item);
  if (first.length > limit) first.pop();
}
