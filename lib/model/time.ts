/**
 * formatTime renders epoch milliseconds as RFC 3339 in UTC, as
 * Date.prototype.toISOString does, with 0 fractional digits (metav1.Time), 3
 * (toISOString's own) or 6 (metav1.MicroTime, whose last three are zeros).
 *
 * It reads the date's UTC fields instead of calling toISOString: the first
 * toISOString in a process initialises V8's time-zone cache from ICU, which
 * touches about 0.8 MB of the node binary's ICU data and code that stay
 * resident for the life of the process, in every controller that writes a
 * condition or renews a Lease.
 */
export function formatTime(ms: number, fractionDigits: 0 | 3 | 6 = 3): string {
  const d = new Date(ms);
  const year = d.getUTCFullYear();
  // Outside 0000–9999 toISOString writes a signed six-digit year; such times are no controller's, so leave them to it.
  if (Number.isNaN(year) || year < 0 || year > 9999) return trimFraction(d.toISOString(), fractionDigits);
  const millis = d.getUTCMilliseconds();
  const fraction =
    fractionDigits === 0
      ? ''
      : `.${TWO[(millis / 100) | 0]![1]}${TWO[millis % 100]}${fractionDigits === 6 ? '000' : ''}`;
  return `${TWO[(year / 100) | 0]}${TWO[year % 100]}-${TWO[d.getUTCMonth() + 1]}-${TWO[d.getUTCDate()]}T${TWO[d.getUTCHours()]}:${TWO[d.getUTCMinutes()]}:${TWO[d.getUTCSeconds()]}${fraction}Z`;
}

/** Every number below 100 in two digits: each field of a time is one lookup, without a string padded for it. */
const TWO: readonly string[] = Array.from({ length: 100 }, (_, i) => (i < 10 ? `0${i}` : String(i)));

function trimFraction(iso: string, fractionDigits: 0 | 3 | 6): string {
  return fractionDigits === 3 ? iso : iso.replace(/\.(\d{3})Z$/, fractionDigits === 0 ? 'Z' : '.$1000Z');
}
