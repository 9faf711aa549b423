/**
 * The past moment the dashboard shows lives in the URL as `?at=`, an RFC 3339
 * instant (`2026-11-26T14:02:11Z`, or with an offset such as `+01:00`), so a
 * link to "how it looked at 14:02" opens that view and a reload keeps it.
 */

export const AT_PARAM = 'at';
export const AT_EXAMPLE = '2026-11-26T14:02:11Z';

/** PastMoment is what `?at=` asks for: live (`at: null`), a past instant, or live with a notice saying why the value was not used. */
export type PastMoment = { at: number | null; error?: undefined } | { at: null; error: string };

// Date.parse accepts far more than RFC 3339 (and differs between browsers): only the one format is taken.
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** parsePastMoment reads the `at` parameter's value; `now` decides what lies in the future. */
export function parsePastMoment(value: string | null | undefined, now: number): PastMoment {
  if (value === null || value === undefined || value.trim() === '') return { at: null };
  const text = value.trim();
  const shown = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  const invalid = (why: string): PastMoment => ({
    at: null,
    error: `The URL's ${AT_PARAM} parameter "${shown}" ${why}: write an RFC 3339 time such as ?${AT_PARAM}=${AT_EXAMPLE}. Showing the live graph.`,
  });
  const m = RFC3339.exec(text);
  if (!m) return invalid('is not a time');
  const [, year, month, day, hour, minute, second, , zone] = m as unknown as string[];
  const at = Date.parse(text.toUpperCase());
  if (!Number.isFinite(at) || Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59)
    return invalid('is not a valid time');
  // Some engines roll 2026-02-30 over to March 2: the wall-clock date must read back as written.
  const wall = new Date(at + (zone!.toUpperCase() === 'Z' ? 0 : offsetMinutes(zone!)) * 60_000);
  if (
    wall.getUTCFullYear() !== Number(year) ||
    wall.getUTCMonth() + 1 !== Number(month) ||
    wall.getUTCDate() !== Number(day)
  )
    return invalid('is not a valid time');
  if (at > now) return invalid('lies in the future');
  return { at };
}

function offsetMinutes(offset: string): number {
  const sign = offset.startsWith('-') ? -1 : 1;
  return sign * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6)));
}

/** formatPastMoment writes an instant for `?at=`: UTC, to the second unless it has milliseconds. */
export function formatPastMoment(at: number): string {
  const iso = new Date(at).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}
