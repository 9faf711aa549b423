import type { InformerSource, InformerSubscription, Manager, WatchError } from '../engine';
import { kindKey, type GroupKind } from '../model';
import { isRecord } from './field-path';
import type { RulesObserver } from './observer';
import { builtinPacks, PACK_GROUPS, type PackName } from './packs';

/** PackState says whether a pack is on and why, in words a Cluster panel shows: "cert-manager: on, cert-manager.io/v1 served". */
export interface PackState {
  pack: PackName;
  on: boolean;
  why: string;
}

export interface PackSwitchOptions {
  manager: Manager;
  /** The source whose CustomResourceDefinition watch says which groups are served. */
  source: InformerSource;
  /** An observer whose rule set holds every pack switched here. */
  observer: RulesObserver;
  /** The packs to switch: each on while one of its groups is served. */
  packs: readonly Exclude<PackName, 'core'>[];
  /** Referrer kinds attached whatever the packs (core, rules files): never detached here. */
  alwaysOn: readonly GroupKind[];
  /** Told after a pack turns on or off, and when the CRD watch fails or recovers. */
  onChange?: (states: PackState[]) => void;
  /** Told when removing a pack's controller fails. */
  onError?: (what: string, error: unknown) => void;
}

const CRD: GroupKind = { group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' };

/**
 * PackSwitch runs `--packs auto`: it watches CustomResourceDefinitions (a
 * watch, not a poll), and attaches a pack's referrer controllers while one of
 * its API groups is served, removing them when the last is gone. Nothing is
 * switched before the CRD cache is primed. A CRD watch that fails (Forbidden)
 * leaves the packs as they are and says so in their states.
 */
export class PackSwitch {
  private sub: InformerSubscription | undefined;
  private readonly on = new Set<PackName>();
  private states: PackState[];
  private failing: WatchError | undefined;
  private readonly removals = new Set<Promise<void>>();

  constructor(private readonly opts: PackSwitchOptions) {
    this.states = opts.packs.map((pack) => ({ pack, on: false, why: `${pack}: off, waiting for the CRD list` }));
  }

  start(): void {
    if (this.sub) return;
    this.sub = this.opts.source.acquire(CRD, (event) => {
      switch (event.type) {
        case 'error':
          this.failing = event.error;
          this.evaluate();
          return;
        case 'recovered':
          this.failing = undefined;
          this.evaluate();
          return;
        default:
          if (this.sub?.isPrimed()) this.evaluate();
      }
    });
    // A source that primes or fails during acquire told the handler before this.sub was set.
    this.evaluate();
  }

  /** packStates lists every switched pack, in the order given. */
  packStates(): PackState[] {
    return this.states.map((s) => ({ ...s }));
  }

  /** stop releases the CRD watch and awaits controller removals in flight; the attached controllers stay until the Manager stops. */
  async stop(): Promise<void> {
    const sub = this.sub;
    this.sub = undefined;
    await sub?.release();
    await Promise.all([...this.removals]);
  }

  private evaluate(): void {
    const sub = this.sub;
    if (!sub) return;
    if (!sub.isPrimed()) {
      if (this.failing) this.publish(this.opts.packs.map((pack) => this.unknown(pack)));
      return;
    }
    const next = packStatesOf(this.opts.packs, servedVersions(sub.store.values()));
    const wanted = new Set(next.filter((s) => s.on).map((s) => s.pack));
    for (const pack of wanted) if (!this.on.has(pack)) this.switchOn(pack);
    for (const pack of [...this.on]) if (!wanted.has(pack)) this.switchOff(pack);
    this.publish(this.failing ? next.map((s) => ({ ...s, why: `${s.why} (${this.staleNote()})` })) : next);
  }

  private unknown(pack: Exclude<PackName, 'core'>): PackState {
    const on = this.on.has(pack);
    return { pack, on, why: `${pack}: ${on ? 'on' : 'off'}, undecided: ${this.staleNote()}` };
  }

  private staleNote(): string {
    const e = this.failing!;
    const rule = e.missingRule
      ? `; grant apiGroups: ["${e.missingRule.apiGroup}"], resources: ["${e.missingRule.resource}"], verbs: ${JSON.stringify(e.missingRule.verbs)}, or give --packs explicitly`
      : '';
    return `the CustomResourceDefinition watch fails with ${e.reason}: ${e.message}${rule}`;
  }

  private publish(next: PackState[]): void {
    const changed = JSON.stringify(next) !== JSON.stringify(this.states);
    this.states = next;
    if (changed) this.opts.onChange?.(this.packStates());
  }

  private kindsOf(pack: PackName): GroupKind[] {
    return builtinPacks[pack].rules.map((r) => ({ group: r.referrer.group, kind: r.referrer.kind }));
  }

  /** Kinds some other reason keeps attached: always-on, or another pack that is on. */
  private keptKinds(except: PackName): Set<string> {
    const kept = new Set(this.opts.alwaysOn.map(kindKey));
    for (const p of this.on) if (p !== except) for (const gk of this.kindsOf(p)) kept.add(kindKey(gk));
    return kept;
  }

  private switchOn(pack: PackName): void {
    const kept = this.keptKinds(pack);
    this.on.add(pack);
    const kinds = this.kindsOf(pack).filter((gk) => !kept.has(kindKey(gk)));
    try {
      if (kinds.length > 0) this.opts.observer.attach(this.opts.manager, { kinds });
    } catch (e) {
      // A controller of the same name still stopping (the pack went off and on at once) is reported, not thrown into the watch.
      this.opts.onError?.(`switching ${pack} on`, e);
    }
  }

  private switchOff(pack: PackName): void {
    const kept = this.keptKinds(pack);
    this.on.delete(pack);
    for (const gk of this.kindsOf(pack)) {
      if (kept.has(kindKey(gk))) continue;
      const name = `rules/${kindKey(gk)}`;
      const removal = this.opts.manager
        .removeController(name)
        .catch((e: unknown) => this.opts.onError?.(`removing ${name}`, e))
        .finally(() => this.removals.delete(removal));
      this.removals.add(removal);
    }
  }
}

/**
 * packStatesOf says which packs `--packs auto` turns on, given the served API
 * groups (group → its served `group/version`), and why.
 */
export function packStatesOf(
  packs: readonly Exclude<PackName, 'core'>[],
  served: ReadonlyMap<string, string>,
): PackState[] {
  return packs.map((pack) => {
    const gv = PACK_GROUPS[pack].map((g) => served.get(g)).find((v) => v !== undefined);
    if (gv) return { pack, on: true, why: `${pack}: on, ${gv} served` };
    return { pack, on: false, why: `${pack}: off, ${PACK_GROUPS[pack].join(', ')} not served` };
  });
}

/** servedVersions maps each API group that an established CRD serves to its first served `group/version`. */
function servedVersions(crds: Iterable<unknown>): Map<string, string> {
  const out = new Map<string, string>();
  for (const crd of crds) {
    if (!isRecord(crd) || !isRecord(crd.spec) || typeof crd.spec.group !== 'string') continue;
    // A CRD being deleted is on its way out: its pack turns off now, not when its objects are gone.
    if (isRecord(crd.metadata) && crd.metadata.deletionTimestamp) continue;
    const conditions = isRecord(crd.status) && Array.isArray(crd.status.conditions) ? crd.status.conditions : [];
    const established = conditions.find((c) => isRecord(c) && c.type === 'Established');
    // A CRD the server has not established yet serves nothing; one without conditions (a minimal server) does.
    if (isRecord(established) && established.status !== 'True') continue;
    const versions = Array.isArray(crd.spec.versions) ? crd.spec.versions : [];
    const v = versions.find((x) => isRecord(x) && x.served === true && typeof x.name === 'string');
    if (isRecord(v) && !out.has(crd.spec.group)) out.set(crd.spec.group, `${crd.spec.group}/${String(v.name)}`);
  }
  return out;
}
