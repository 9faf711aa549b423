import type { ObjectKey, Reference } from '../model';

/** Producer is a referrer that creates a referent (a Certificate its Secret), as a rule with `produces` says. */
export interface Producer {
  producer: ObjectKey;
  /** The controller that reconciles the producer, whose references say what it waits on. */
  controller: string;
  fieldPath: string;
}

/**
 * ProducerSource answers who produces a referent and what a producer waits
 * on, so that a missing referent is traced to what blocks its producer.
 */
export interface ProducerSource {
  producersOf(referent: ObjectKey): readonly Producer[];
  referencesOf(controller: string, referrer: ObjectKey): readonly Reference[];
  namespaceFieldOf(controller: string, fieldPath: string): string | null | undefined;
}

/**
 * The producer sources registered beside a Manager's reference controllers.
 * Keyed by that object, so that every diagnosis over the Manager (explain,
 * stuck, snapshots, details) names producers without each caller passing
 * them; a WeakMap, so a stopped Manager's sources go with it.
 */
const sources = new WeakMap<object, Set<ProducerSource>>();

/** registerProducers adds a source for diagnoses over referenceControllers; the returned function removes it. */
export function registerProducers(referenceControllers: object, source: ProducerSource): () => void {
  let set = sources.get(referenceControllers);
  if (!set) {
    set = new Set();
    sources.set(referenceControllers, set);
  }
  set.add(source);
  return () => void sources.get(referenceControllers)?.delete(source);
}

/** producerSourcesOf lists the sources registered for referenceControllers. */
export function producerSourcesOf(referenceControllers: object): readonly ProducerSource[] {
  const set = sources.get(referenceControllers);
  return set ? [...set] : [];
}

/**
 * ProducerIndex keeps, per producer, the referents it produces, and answers
 * the reverse: who produces a referent. A producer's set is replaced whole
 * on each reconcile, as references are.
 */
export class ProducerIndex {
  private readonly byProducer = new Map<string, { controller: string; producer: ObjectKey; produced: Reference[] }>();
  private readonly byReferent = new Map<ObjectKey, Map<string, Producer>>();

  /** set replaces what producer (reconciled by controller) produces; an empty list forgets it. */
  set(controller: string, producer: ObjectKey, produced: readonly Reference[]): void {
    const id = `${controller}|${producer}`;
    const prev = this.byProducer.get(id);
    if (prev)
      for (const r of prev.produced) {
        const m = this.byReferent.get(r.referent);
        m?.delete(id);
        if (m?.size === 0) this.byReferent.delete(r.referent);
      }
    if (produced.length === 0) {
      this.byProducer.delete(id);
      return;
    }
    this.byProducer.set(id, { controller, producer, produced: [...produced] });
    for (const r of produced) {
      let m = this.byReferent.get(r.referent);
      if (!m) {
        m = new Map();
        this.byReferent.set(r.referent, m);
      }
      m.set(id, { producer, controller, fieldPath: r.fieldPath });
    }
  }

  producersOf(referent: ObjectKey): Producer[] {
    const m = this.byReferent.get(referent);
    return m ? [...m.values()] : [];
  }
}
