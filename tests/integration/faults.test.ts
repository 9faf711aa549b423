import { existsSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import { runCase, type CaseResult, type FaultCase } from '@/bench/faults/cases';
import type { FaultOutcome } from '@/bench/faults/workload';
import { kubeRequest } from '../setup/kube-http';

// The fault cases of bench/faults on the real tier: each starts a
// kube-apiserver and etcd of its own (with the flags its fault needs), runs
// the demo's workload through refwatch's engine, injects the fault, and checks
// every App at the end. The benchmark runs the same cases with 500 Apps and
// reports how long recovery took; timings are its business, not these tests'.

const kind = inject('refwatchCluster').kind;
const APPS = 200;
const CASE_TIMEOUT_MS = 240_000;
const KINDS = ['App', 'Database', 'Cache', 'Secret'];

if (kind !== 'real')
  console.log(
    'faults.test.ts: runs on the real tier only (REFWATCH_TEST_CLUSTER=real): each case starts a kube-apiserver and etcd of its own',
  );

/** expectSound checks what every case must end with: each App in its right state, nothing twice, nothing after deletion, one watch per kind. */
function expectSound(o: FaultOutcome): void {
  expect(o.apps).toBe(APPS);
  expect(o.lostSamples, 'Apps in the wrong state at the end').toEqual([]);
  expect(o.lost).toBe(0);
  expect(o.duplicated).toBe(0);
  expect(o.reconcilesAfterDelete).toBe(0);
  expect(o.deleted).toBeGreaterThan(0);
  expect(o.deletionsMissed).toBe(0);
  expect(o.recoverySeconds, 'every App the fault held up was resolved').toBeDefined();
  // Besides the workload's kinds, a Forbidden watch makes the pool watch RoleBindings, to retry when RBAC changes.
  const { RoleBinding: rbacWatches = 0, ...workload } = o.watchesPerKind;
  expect(workload).toEqual(Object.fromEntries(KINDS.map((k) => [k, 1])));
  expect(rbacWatches).toBeLessThanOrEqual(1);
}

/** expectStopped checks that the case stopped its cluster: kube-apiserver refuses connections and its directory is gone. */
async function expectStopped(r: CaseResult): Promise<void> {
  await expect(kubeRequest({ url: r.cluster.url, token: '' }, 'GET', '/readyz', { insecure: true })).rejects.toThrow(
    /ECONNREFUSED/,
  );
  expect(existsSync(r.cluster.dir)).toBe(false);
}

/** runSound runs a case and checks what every case must end with, and that it stopped its cluster. */
async function runSound(name: FaultCase): Promise<CaseResult> {
  const result = await runCase(name, { apps: APPS });
  await expectStopped(result);
  expectSound(result.outcome);
  return result;
}

/** relistsPerKind is how many lists each kind made between the fault starting and the end. */
function relistsPerKind(o: FaultOutcome): Record<string, number> {
  return Object.fromEntries(KINDS.map((k) => [k, o.watchesAtEnd[k]!.lists - o.watchesAtStart[k]!.lists]));
}

describe.runIf(kind === 'real')(`faults on a real kube-apiserver, ${APPS} Apps each`, () => {
  it(
    'gone: watches resumed from compacted revisions get 410 Gone; each kind relists and nothing is lost',
    async () => {
      const { outcome, observed } = await runSound('gone');
      expect(observed.resets).toBeGreaterThan(0);
      const expired = Object.fromEntries(
        KINDS.map((k) => [
          k,
          outcome.relists
            .filter((r) => r.kind.split('.')[0] === k && r.reason === 'Expired')
            .reduce((n, r) => n + r.count, 0),
        ]),
      );
      for (const k of KINDS) expect(expired[k], `${k} relisted after 410 Gone`).toBeGreaterThan(0);
    },
    CASE_TIMEOUT_MS,
  );

  it.each(['apiserverRestart', 'etcdRestart'] as const)(
    '%s: watches resume, with at most one relist per kind and one watch per kind',
    async (name) => {
      const { outcome } = await runSound(name);
      for (const [k, n] of Object.entries(relistsPerKind(outcome)))
        expect(n, `lists of ${k} after the restart`).toBeLessThanOrEqual(1);
      if (name === 'apiserverRestart') {
        for (const k of KINDS)
          expect(outcome.watchesAtEnd[k]!.watchesOpened, `${k} watched again`).toBeGreaterThan(
            outcome.watchesAtStart[k]!.watchesOpened,
          );
      }
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'throttled: API Priority and Fairness rejects refwatch with 429; it waits as told and loses nothing',
    async () => {
      const { observed } = await runSound('throttled');
      expect(observed.rejected).toBeGreaterThan(0);
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'rbac: with its Databases binding removed refwatch reports Forbidden with the missing rule, and recovers once restored',
    async () => {
      const { outcome, observed } = await runSound('rbac');
      expect(observed.forbidden).toMatchObject({ state: 'Forbidden', fieldPath: 'spec.databaseRef' });
      expect(observed.forbidden!.fix).toContain('resources: ["databases"], verbs: ["list","watch"]');
      expect(observed.referentState).toBe('Forbidden');
      expect(observed.controllerErrors!.map((e) => e.missingRule)).toContainEqual(
        expect.objectContaining({ verbs: ['list', 'watch'], apiGroup: 'demo.refwatch.dev', resource: 'databases' }),
      );
      expect(outcome.waitingAtClear).toBeGreaterThan(0);
    },
    CASE_TIMEOUT_MS,
  );
});
