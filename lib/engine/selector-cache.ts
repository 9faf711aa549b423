import { deepFreeze, parseSelector, type ParseSelectorOptions, type Selector } from '../model';

/**
 * parsed holds the Selector read from each deeply frozen selector object, per
 * form, meaning of empty and field. A referrer's selector is its cached
 * object's own, frozen at ingest and the same object until the referrer
 * changes, so each reconcile after the first costs a lookup instead of a
 * parse. The WeakMap lets an entry go with its object.
 */
const parsed = new WeakMap<object, Map<string, Selector | undefined>>();

/**
 * parseSelectorOnce is parseSelector for the engine's hot path: a deeply
 * frozen selector object is parsed once per options and the frozen answer
 * shared; one that is not frozen may change between calls and is parsed
 * every time. Bad input throws parseSelector's RefwatchError on every call.
 */
export function parseSelectorOnce(raw: unknown, opts: ParseSelectorOptions): Selector | undefined {
  if (raw === null || typeof raw !== 'object') return unwrap(parseSelector(raw, opts));
  // Only deeply frozen objects get an entry, and freezing cannot be undone: an entry spares the walk.
  let byOptions = parsed.get(raw);
  if (!byOptions && !deeplyFrozen(raw)) return unwrap(parseSelector(raw, opts));
  const id = `${opts.form}|${opts.empty ?? 'all'}|${opts.field ?? ''}`;
  if (byOptions?.has(id)) return byOptions.get(id);
  const selector = unwrap(parseSelector(raw, opts));
  if (!byOptions) parsed.set(raw, (byOptions = new Map()));
  byOptions.set(id, selector && deepFreeze(selector));
  return selector;
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
