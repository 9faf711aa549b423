import type { Manager, ReferenceNote } from '../engine';
import type { ReferenceExplanation, ReferenceState } from './reference-diagnosis';

/**
 * withNote applies what the referrer's controller says about a reference: the
 * state it really has when the referrer may not use it (RefNotPermitted), or,
 * for a reference that is not Ready, a label before the message (`orphaned: …`), the cost meanwhile
 * after it (a webhook's blast radius), and `blocking: false` for a reference
 * that never keeps its referrer unresolved.
 */
export function withNote(e: ReferenceExplanation, note: ReferenceNote | undefined): ReferenceExplanation {
  if (!note) return e;
  if (note.override) {
    const o = note.override;
    return { ...e, state: o.state as ReferenceState, reason: o.reason, message: o.message, fix: o.fix };
  }
  if (e.state === 'Ready') return e;
  const out: ReferenceExplanation = { ...e };
  if (note.label !== undefined) out.message = `${note.label}: ${out.message}`;
  if (note.impact !== undefined) out.message = `${out.message}; ${note.impact}`;
  if (note.blocking === false) out.blocking = false;
  return out;
}

/** noteOf asks the referrer's controller for its note on one reference; undefined when it has none. */
export function noteOf(
  manager: Pick<Manager, 'controller'>,
  controller: string,
  key: string,
  e: ReferenceExplanation,
): ReferenceNote | undefined {
  return manager.controller(controller)?.describeReference(key, e, e.state);
}
