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
  const date = `${pad(year, 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}`;
  const time = `${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`;
  const millis = pad(d.getUTCMilliseconds(), 3);
  const fraction = fractionDigits === 0 ? '' : fractionDigits === 3 ? `.${millis}` : `.${millis}000`;
  return `${date}T${time}${fraction}Z`;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

function trimFraction(iso: string, fractionDigits: 0 | 3 | 6): string {
  return fractionDigits === 3 ? iso : iso.replace(/\.(\d{3})Z$/, fractionDigits === 0 ? 'Z' : '.$1000Z');
}
