import { RefwatchError, err, ok, type Result } from '../model';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const SEGMENT = /(\d+(?:\.\d+)?|\.\d+)(ms|s|m|h|d)/gy;
const BARE_MS = /^\d+$/;
/** A year: longer thresholds are typos, not intentions. */
const MAX_MS = 365 * UNIT_MS.d!;

/**
 * parseDuration reads a duration such as `30s`, `5m`, `1h`, `250ms`, `1h30m`
 * or a bare number of milliseconds (`1500`) and returns milliseconds. Bad
 * input is an error naming `field`, never a throw.
 */
export function parseDuration(input: unknown, field = 'duration'): Result<number> {
  const bad = (why: string) =>
    err(
      new RefwatchError(
        'InvalidDuration',
        `${field} ${why}: use a number with a unit ms, s, m, h or d (1h30m also works), or a bare number of milliseconds`,
        { field, example: '30s' },
      ),
    );
  if (typeof input === 'number')
    return Number.isFinite(input) && input >= 0 && input <= MAX_MS
      ? ok(input)
      : bad(`${input} is not a duration from 0 to 365d`);
  if (typeof input !== 'string') return bad('is missing');
  const s = input.trim();
  if (s === '') return bad('is empty');
  if (s.length > 64) return bad(`"${s.slice(0, 16)}…" is too long`);
  let ms: number;
  if (BARE_MS.test(s)) {
    ms = Number(s);
  } else {
    ms = 0;
    SEGMENT.lastIndex = 0;
    let at = 0;
    for (let m = SEGMENT.exec(s); m !== null; m = SEGMENT.exec(s)) {
      ms += Number(m[1]) * UNIT_MS[m[2]!]!;
      at = SEGMENT.lastIndex;
    }
    if (at !== s.length) return bad(`"${input}" is not a duration`);
  }
  if (ms > MAX_MS) return bad(`"${input}" is longer than 365d`);
  return ok(Math.round(ms));
}

/** formatDuration renders milliseconds for a person: `250 ms`, `12.3 s`, `4 min 10 s`, `2 h 5 min`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms < 0) return `-${formatDuration(-ms)}`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 59_950) return `${(ms / 1000).toFixed(1)} s`;
  const totalS = Math.round(ms / 1000);
  if (totalS < 3600) {
    const s = totalS % 60;
    return `${Math.floor(totalS / 60)} min${s ? ` ${s} s` : ''}`;
  }
  const totalMin = Math.round(ms / 60_000);
  const min = totalMin % 60;
  return `${Math.floor(totalMin / 60)} h${min ? ` ${min} min` : ''}`;
}
