/** formatDuration prints a span the way an operator reads it: 850 ms, 12 s, 4 m 10 s, 3 h 5 m, 2 d 4 h. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '—';
  const abs = Math.max(0, ms);
  if (abs < 1000) return `${Math.round(abs)} ms`;
  const s = Math.floor(abs / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 === 0 ? `${m} m` : `${m} m ${s % 60} s`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} m`;
  const d = Math.floor(h / 24);
  return h % 24 === 0 ? `${d} d` : `${d} d ${h % 24} h`;
}

/** formatAgo: "12 s ago"; a time in the future reads "in 12 s". */
export function formatAgo(at: number | undefined, now: number): string {
  if (at === undefined) return '—';
  const d = now - at;
  if (Math.abs(d) < 1000) return 'just now';
  return d >= 0 ? `${formatDuration(d)} ago` : `in ${formatDuration(-d)}`;
}

export function formatClock(at: number): string {
  const d = new Date(at);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

export function formatIso(at: number | undefined): string {
  return at === undefined ? '' : new Date(at).toISOString();
}
