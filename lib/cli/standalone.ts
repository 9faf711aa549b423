import os from 'node:os';
import path from 'node:path';
import type { Change, StuckEntry } from '../changelog';
import { explain, ExplainError, stuck, type Explanation } from '../diagnose';
import { Manager, watchTargetKey, type InformerSubscription, type WatchTarget } from '../engine';
import { createLogger, KubeClient, parseLogLevel, SharedInformerPool } from '../kube';
import {
  isRefwatchError,
  kindKey,
  kindOfKey,
  namespaceOfKey,
  parseKey,
  parseKindKey,
  type GroupKind,
  type ObjectKey,
} from '../model';
import {
  coversReferrer,
  loadRuleSet,
  observeRuleSet,
  referrerKinds,
  type PackName,
  type RulesObserver,
} from '../rules';
import type { Backend, Graph, StuckQuery, WatchMessage, WatchScope } from './backend';
import { readClusterRules } from './cluster-rules';
import { CliError } from './errors';
import { DiscoveryKinds } from './kinds';

export interface StandaloneOptions {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  packs: PackName[];
  rules: string[];
  timeoutMs: number;
  env?: NodeJS.ProcessEnv;
  /** Told each problem of a bad ReferenceRules object of the cluster, one line each (default: stderr). */
  warn?: (line: string) => void;
}

/** How deep `tree` follows referents that are referrers themselves (Pod → PVC → StorageClass). */
const MAX_DEPTH = 6;
const SETTLE_POLL_MS = 5;

/**
 * Scope is one referrer kind the session watches, in one namespace or all:
 * its rules controller and the session's own handle on the same shared watch.
 */
interface Scope {
  kind: GroupKind;
  namespace: string | undefined;
  controller: string;
  /** The referrers to reconcile; undefined: all of them. */
  only: Set<ObjectKey> | undefined;
  /** A required scope that cannot list its kind fails the command; an optional one is left out. */
  required: boolean;
  subscription: InformerSubscription;
}

/**
 * StandaloneBackend runs refwatch's engine headless against a kubeconfig:
 * the rules controllers of just the referrer kinds a question needs (narrowed
 * to one namespace, and to the objects asked about), the reference
 * controllers their references start, and nothing else. A question is
 * answered once every one of those caches is primed and every queue is idle.
 */
export class StandaloneBackend implements Backend {
  readonly kinds: DiscoveryKinds;
  readonly namespace: string;
  readonly knowsSince = false;
  private readonly scopes = new Map<string, Scope>();
  private readonly manager: Manager;
  private readonly observer: RulesObserver;
  /** Which kubeconfig and context, for messages. */
  private readonly where: string;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly client: KubeClient,
    observer: RulesObserver,
    private readonly opts: StandaloneOptions,
    where: string,
    /** What the cluster's ReferenceRules added, for the message of a kind no rule covers. */
    private readonly clusterRules: string,
  ) {
    this.observer = observer;
    this.where = where;
    this.kinds = new DiscoveryKinds(client, where);
    this.namespace = opts.namespace ?? client.describe().namespace ?? 'default';
    // The CLI reports failures itself, as one error line and an exit code; the engine's own
    // watch lines appear only when asked for with REFWATCH_LOG_LEVEL.
    const logger = createLogger({ level: parseLogLevel((opts.env ?? process.env).REFWATCH_LOG_LEVEL) ?? 'silent' });
    this.manager = new Manager({
      source: new SharedInformerPool({ client, logger }),
      logger,
      statsIntervalMs: 0,
      readiness: (kind) => observer.readiness(kind),
    });
    this.manager.start();
  }

  static async open(opts: StandaloneOptions): Promise<StandaloneBackend> {
    const { client, where } = openKubeClient(opts);
    // The cluster's ReferenceRules join the packs and files, as on the server; a bad one is reported and skipped.
    const fromCluster = await readClusterRules(client, opts.timeoutMs);
    const warn = opts.warn ?? ((line: string) => process.stderr.write(`${line}\n`));
    for (const problem of fromCluster.problems) warn(`warning: ${problem}`);
    let observer: RulesObserver;
    try {
      observer = observeRuleSet(await loadRuleSet(opts.packs, opts.rules, fromCluster.documents));
    } catch (e) {
      client.close();
      throw new CliError(`flag --rules: ${isRefwatchError(e) || e instanceof Error ? e.message : String(e)}`);
    }
    return new StandaloneBackend(client, observer, opts, where, fromCluster.summary);
  }

  async explain(key: ObjectKey): Promise<Explanation> {
    const scope = this.observeObject(key);
    // Referents that are referrers themselves are watched too, so a root cause down the chain is seen.
    await this.followReferents(key);
    const r = explain(this.manager, key, { controller: scope.controller });
    if (r.ok) return r.value;
    if (!scope.subscription.store.get(key)) throw new CliError(`${key} not found${suggest(r.error)}`, 1);
    throw new CliError(r.error.message, 1);
  }

  async stuck(q: StuckQuery): Promise<StuckEntry[]> {
    const kinds = q.kind ? [this.parseKind(q.kind, '--kind')] : referrerKinds(this.observer.ruleSet);
    for (const kind of kinds) this.observe(kind, q.namespace, undefined, q.kind !== undefined);
    await this.settle();
    const now = Date.now();
    // The engine has only just seen each referrer: age is counted from the referrer's creation instead.
    return stuck(this.manager, { olderThan: 0, now })
      .map((s) => {
        const created = Date.parse(this.objectOf(s.key)?.metadata.creationTimestamp ?? '');
        const since = Number.isFinite(created) ? created : s.since;
        return { ...s, since, ageMs: Math.max(0, now - since) };
      })
      .filter((s) => s.ageMs >= q.olderThanMs)
      .sort((a, b) => a.since - b.since || (a.key < b.key ? -1 : 1));
  }

  async graph(root: ObjectKey, opts: { reverse: boolean; allNamespaces: boolean }): Promise<Graph> {
    if (opts.reverse) {
      const ns = opts.allNamespaces ? undefined : namespaceOfKey(root) || undefined;
      for (const kind of referrerKinds(this.observer.ruleSet)) this.observe(kind, ns, undefined, false);
      await this.settle();
      return this.snapshot();
    }
    this.observeObject(root);
    await this.followReferents(root);
    return this.snapshot();
  }

  /** followReferents watches, breadth first to MAX_DEPTH, the referents of root that the rules make referrers too. */
  private async followReferents(root: ObjectKey): Promise<void> {
    const seen = new Set<ObjectKey>([root]);
    let frontier = [root];
    for (let depth = 0; depth < MAX_DEPTH && frontier.length > 0; depth++) {
      await this.settle();
      const next: ObjectKey[] = [];
      for (const key of frontier) {
        for (const ctrl of this.manager.controllerNames()) {
          for (const ref of this.manager.registry.referencesOf(ctrl, key)) {
            if (seen.has(ref.referent)) continue;
            seen.add(ref.referent);
            const gk = parseKindKey(kindOfKey(ref.referent));
            if (!gk.ok || !coversReferrer(this.observer.ruleSet, gk.value)) continue;
            this.observe(gk.value, namespaceOfKey(ref.referent) || undefined, [ref.referent], false);
            next.push(ref.referent);
          }
        }
      }
      frontier = next;
    }
    await this.settle();
  }

  async *watch(scope: WatchScope, signal: AbortSignal): AsyncIterable<WatchMessage> {
    if (scope.key) this.observeObject(scope.key);
    else for (const kind of referrerKinds(this.observer.ruleSet)) this.observe(kind, scope.namespace, undefined, false);
    await this.settle();
    const log = this.manager.changelog;
    let rev = log.revision;
    yield { type: 'snapshot', graph: this.snapshot() };
    while (!signal.aborted) {
      try {
        await log.next(rev, signal);
      } catch {
        return; // our own abort
      }
      const since = log.changesSince(rev);
      rev = since.revision;
      if (since.resnapshot) yield { type: 'snapshot', graph: this.snapshot() };
      else yield { type: 'delta', changes: since.changes as Change[] };
    }
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.all([...this.scopes.values()].map((s) => s.subscription.release()));
      await this.manager.stop();
      this.client.close();
    })();
    return this.closing;
  }

  private snapshot(): Graph {
    const e = this.manager.changelog.snapshot({ entities: ['referrer', 'referent', 'reference'] }).entities;
    return { referrers: e.referrer, referents: e.referent, references: e.reference };
  }

  private parseKind(text: string, flag: string): GroupKind {
    const gk = parseKindKey(text, flag);
    if (!gk.ok) throw new CliError(`flag ${gk.error.message}`);
    return gk.value;
  }

  /** observeObject watches one referrer: its kind in its namespace, reconciling it alone. */
  private observeObject(key: ObjectKey): Scope {
    const ref = parseKey(key, 'OBJECT');
    if (!ref.ok) throw new CliError(`argument ${ref.error.message}`);
    const gk = { group: ref.value.group, kind: ref.value.kind };
    return this.observe(gk, ref.value.namespace || undefined, [key], true);
  }

  private observe(
    kind: GroupKind,
    namespace: string | undefined,
    keys: ObjectKey[] | undefined,
    required: boolean,
  ): Scope {
    if (!coversReferrer(this.observer.ruleSet, kind)) {
      const packs = this.opts.packs.length > 0 ? this.opts.packs.join(',') : 'none';
      throw new CliError(
        `no reference rule names ${kindKey(kind)} as a referrer (packs: ${packs}${this.opts.rules.length ? `; rules: ${this.opts.rules.join(',')}` : ''}; ${this.clusterRules}); add a rules file with --rules FILE or a ReferenceRules object (docs/rules.md), or ask a server that runs its controller with --server URL`,
      );
    }
    const all = this.scopes.get(scopeKey(kind, undefined));
    const existing = all ?? this.scopes.get(scopeKey(kind, namespace));
    if (existing) {
      existing.required ||= required;
      if (existing.only) {
        if (keys === undefined) existing.only = undefined;
        else for (const k of keys) existing.only.add(k);
        for (const k of keys ?? existing.subscription.store.keys())
          this.manager.controller(existing.controller)?.enqueue(k);
      }
      return existing;
    }
    const suffix = [...this.scopes.values()].some((s) => s.kind.kind === kind.kind && s.kind.group === kind.group)
      ? `@${namespace ?? '*'}`
      : '';
    const controller = `rules/${kindKey(kind)}${suffix}`;
    const target: WatchTarget = namespace ? { ...kind, namespace } : { ...kind };
    const scope: Scope = {
      kind,
      namespace,
      controller,
      only: keys ? new Set(keys) : undefined,
      required,
      // The same target as the controller's own watch: the pool shares it, so this costs no request.
      subscription: this.manager.source.acquire(target, () => {}),
    };
    this.scopes.set(scopeKey(kind, namespace), scope);
    this.observer.attach(this.manager, {
      kinds: [kind],
      namespace,
      nameSuffix: suffix,
      only: (k) => scope.only === undefined || scope.only.has(k),
    });
    return scope;
  }

  private objectOf(key: ObjectKey) {
    for (const s of this.scopes.values()) {
      const o = s.subscription.store.get(key);
      if (o) return o;
    }
    return undefined;
  }

  /** settle waits until every cache the question needs is primed (or failing for good) and every queue is idle. */
  private async settle(): Promise<void> {
    const deadline = Date.now() + this.opts.timeoutMs;
    for (;;) {
      const pending = this.pending();
      if (pending.length === 0) return;
      if (Date.now() > deadline)
        throw new CliError(
          `no answer within --timeout ${this.opts.timeoutMs / 1000}s: still waiting for ${pending.join('; ')}`,
        );
      await new Promise((r) => setTimeout(r, SETTLE_POLL_MS));
    }
  }

  private pending(): string[] {
    const waiting: string[] = [];
    for (const s of this.scopes.values()) {
      if (s.subscription.isPrimed()) continue;
      const failing = s.subscription.status().lastError;
      if (failing && s.required) {
        // The reflector would retry; a command gives up and says so.
        const why = failing.message.replace(/; retrying in .*$/, '');
        throw new CliError(
          `cannot watch ${kindKey(s.kind)}${s.namespace ? ` in namespace ${s.namespace}` : ''} (${this.where}): ${why}`,
        );
      }
      if (!failing) waiting.push(`the ${kindKey(s.kind)} cache`);
    }
    for (const name of this.manager.controllerNames()) {
      const q = this.manager.controller(name)!.queue.stats();
      if (q.depth > 0 || q.processing > 0) waiting.push(`${name} to reconcile ${q.depth + q.processing} referrers`);
    }
    for (const rc of this.manager.referenceControllers.entities()) {
      if (rc.references === 0) continue;
      const view = this.manager.referenceControllers.inspect(rc.kind, rc.namespace);
      if (!view?.subscription?.isPrimed() && !view?.failing) waiting.push(`the ${rc.kind} cache`);
    }
    return waiting;
  }
}

/**
 * openKubeClient loads the kubeconfig a headless command uses (--kubeconfig,
 * else $KUBECONFIG's first file, else ~/.kube/config) and says which, with
 * the context, for messages.
 */
export function openKubeClient(opts: Pick<StandaloneOptions, 'kubeconfig' | 'context' | 'env'>): {
  client: KubeClient;
  where: string;
} {
  const env = opts.env ?? process.env;
  const file =
    opts.kubeconfig ??
    env.KUBECONFIG?.split(path.delimiter).find(Boolean) ??
    path.join(os.homedir(), '.kube', 'config');
  const flag = opts.kubeconfig ? '--kubeconfig' : env.KUBECONFIG ? 'KUBECONFIG' : 'the default kubeconfig';
  let client: KubeClient;
  try {
    client = KubeClient.fromFile(file, opts.context ? { context: opts.context } : {});
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    const hint =
      /context/i.test(message) && opts.context
        ? 'check --context'
        : 'pass --kubeconfig PATH, or ask a running server with --server URL';
    throw new CliError(`cannot use ${flag} ${file}: ${message}; ${hint}`);
  }
  const where = `${flag === 'the default kubeconfig' ? file : `${flag} ${file}`}, context ${client.describe().context}`;
  return { client, where };
}

function scopeKey(kind: GroupKind, namespace: string | undefined): string {
  return watchTargetKey(namespace ? { ...kind, namespace } : kind);
}

function suggest(e: ExplainError): string {
  const close = e.suggestions.filter((s) => s !== undefined);
  return close.length > 0 ? `; did you mean ${close.join(' or ')}?` : '';
}
