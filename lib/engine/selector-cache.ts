import { deepFreeze, parseSelector, type ParseSelectorOptions, type Selector } from '../model';

/**
 * parsed holds the Selector read from each deeply frozen selector object, per
 * form, meaning of empty and field. A referrer's selector is its cached
 * object's own, frozen at ingest and the same object until the referrer
 * changes, so each reconcile after the first costs a lookup instead of a
 * parse. The WeakMap lets an entry go with its object.
 */
const parsed = new WeakMap<object, Parsed[]>();

/** Parsed is one reading of a selector object: the options it was read with, and the answer. */
interface Parsed {
  readonly form: ParseSelectorOptions['form'];
  readonly empty: ParseSelectorOptions['empty'];
  readonly field: ParseSelectorOptions['field'];
  readonly selector: Selector | undefined;
}

/**
 * parseSelectorOnce is parseSelector for the engine's hot path: a deeply
 * frozen selector object is parsed once per options and the frozen answer
 * shared; one that is not frozen may change between calls and is parsed
 * every time. Bad input throws parseSelector's RefwatchError on every call.
 */
export function parseSelectorOnce(raw: unknown, opts: ParseSelectorOptions): Selector | undefined {
  if (raw === null || typeof raw !== 'object') return unwrap(parseSelector(raw, opts));
  // Only deeply frozen objects get an entry, and freezing cannot be undone: an entry spares the walk.
  let readings = parsed.get(raw);
  if (!readings && !deeplyFrozen(raw)) return unwrap(parseSelector(raw, opts));
  // A referrer reads its selector one way: a scan of one or two readings, with no id string built per call.
  if (readings)
    for (const r of readings)
      if (r.form === opts.form && r.empty === opts.empty && r.field === opts.field) return r.selector;
  const selector = unwrap(parseSelector(raw, opts));
  if (!readings) parsed.set(raw, (readings = []));
  const frozen = selector && deepFreeze(selector);
  readings.push({ form: opts.form, empty: opts.empty, field: opts.field, selector: frozen });
  return frozen;
}

function unwrap(r: ReturnType<typeof parseSelector>): Selector | undefined {
  if (!r.ok) throw r.error;
  return r.value;
}

function deeplyFrozen(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (!Object.isFrozen(value)) return false;
  for (const k in value) if (!deeplyFrozen((value as Record<string, unknown>)[k])) return false;
  return true;
}
