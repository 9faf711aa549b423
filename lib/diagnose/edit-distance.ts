// Two reused rows: suggestions compare one name against thousands, so no call allocates.
let prevRow = new Int32Array(64);
let nextRow = new Int32Array(64);

/**
 * editDistance is the Levenshtein distance between a and b (insertions,
 * deletions and substitutions of UTF-16 code units, each costing 1), bounded
 * by max: any distance above max is reported as max + 1. Only the diagonal
 * band of width 2·max + 1 is computed and a row whose every cell exceeds max
 * ends the work, so comparing a name against many candidates costs
 * O(length · max) each rather than O(length²).
 */
export function editDistance(a: string, b: string, max = Number.POSITIVE_INFINITY): number {
  if (!(max >= 0)) return 1; // NaN or negative bound: nothing is within it, not even a === b
  if (a === b) return 0;
  if (a.length > b.length) {
    const t = a; // a is the shorter: rows are as short as they can be
    a = b;
    b = t;
  }
  // A shared prefix or suffix never changes the distance; names often share both (db-orders, db-ordrs).
  let start = 0;
  let endA = a.length;
  let endB = b.length;
  while (start < endA && a.charCodeAt(start) === b.charCodeAt(start)) start++;
  while (endA > start && a.charCodeAt(endA - 1) === b.charCodeAt(endB - 1)) {
    endA--;
    endB--;
  }
  const n = endA - start;
  const m = endB - start;
  const over = Number.isFinite(max) && max < m ? Math.floor(max) + 1 : m + 1;
  if (m - n >= over) return over;
  if (n === 0) return m;

  if (prevRow.length < m + 2) {
    prevRow = new Int32Array(2 * (m + 2));
    nextRow = new Int32Array(2 * (m + 2));
  }
  let prev = prevRow;
  let row = nextRow;
  const band = over - 1;
  // prev[j] and row[j]: distance between a[0..i) and b[0..j); cells just outside the band hold `over`.
  for (let j = 0; j <= m; j++) prev[j] = j <= band ? j : over;
  for (let i = 1; i <= n; i++) {
    const lo = i > band ? i - band : 1;
    const hi = i + band < m ? i + band : m;
    let left = lo === 1 ? (i < over ? i : over) : over;
    row[lo - 1] = left;
    let rowMin = left;
    const ai = a.charCodeAt(start + i - 1);
    for (let j = lo; j <= hi; j++) {
      let d = prev[j - 1]! + (ai === b.charCodeAt(start + j - 1) ? 0 : 1);
      const up = prev[j]! + 1;
      if (up < d) d = up;
      if (left + 1 < d) d = left + 1;
      if (d > over) d = over;
      row[j] = d;
      left = d;
      if (d < rowMin) rowMin = d;
    }
    if (hi < m) row[hi + 1] = over;
    if (rowMin >= over) return over;
    const t = prev;
    prev = row;
    row = t;
  }
  const d = prev[m]!;
  return d < over ? d : over;
}
