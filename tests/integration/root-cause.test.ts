import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { StuckEntry } from '@/lib/changelog';
import { explain, foldWorkloads, groupByRootCause, groupTitle, ownedText, stuck } from '@/lib/diagnose';
import { Manager } from '@/lib/engine';
import { KubeClient, SharedInformerPool } from '@/lib/kube';
import { observeWithRules } from '@/server/observer';
import { runCli, type CliRun } from '../setup/cli';
import { getTestCluster, type TestCluster } from '../setup/cluster';

/*
 * Root causes through chains on a cluster whose controllers are not ours,
 * with the core rule pack and a rules file that makes Deployments and
 * ReplicaSets referrers through their Pod templates: a Pod waits on its
 * PersistentVolumeClaim, which waits on a StorageClass whose name has a typo.
 * On kube-apiserver, also a Deployment → ReplicaSet → Pods family stuck on
 * that cause, named once (the embedded server serves no ReplicaSets).
 */

const clusterKind = inject('refwatchCluster').kind;
let cluster: TestCluster;
let client: KubeClient;
let dir: string;
let rulesFile: string;
const managers: Manager[] = [];
const storageClasses: string[] = [];

const RULES = `name: root-cause-test
rules:
  - referrer: { group: apps, kind: Deployment }
    references:
      - path: spec.template.spec.volumes[*].persistentVolumeClaim.claimName
        referent: { kind: PersistentVolumeClaim }
  - referrer: { group: apps, kind: ReplicaSet }
    references:
      - path: spec.template.spec.volumes[*].persistentVolumeClaim.claimName
        referent: { kind: PersistentVolumeClaim }
`;

beforeAll(async () => {
  cluster = await getTestCluster();
  client = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: `${clusterKind} test cluster` });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'refwatch-root-cause-'));
  rulesFile = path.join(dir, 'rules.yaml');
  fs.writeFileSync(rulesFile, RULES);
  fs.writeFileSync(path.join(dir, 'kubeconfig.json'), JSON.stringify(cluster.kubeconfig));
});
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
});
afterAll(async () => {
  for (const name of storageClasses.splice(0))
    await client.request('DELETE', `/apis/storage.k8s.io/v1/storageclasses/${name}`).catch(() => undefined);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

async function observe(): Promise<Manager> {
  const observer = await observeWithRules({ rulePacks: ['core'], rulesFiles: [rulesFile] });
  const manager = new Manager({
    source: new SharedInformerPool({ client }),
    grace: 1_000,
    statsIntervalMs: 0,
    readiness: (kind) => observer.readiness(kind),
  });
  observer.attach(manager);
  managers.push(manager);
  manager.start();
  return manager;
}

async function create(p: string, body: object): Promise<{ metadata: { uid: string } }> {
  return (await client.request('POST', p, { body })) as { metadata: { uid: string } };
}

async function storageClass(name: string): Promise<void> {
  storageClasses.push(name);
  await create('/apis/storage.k8s.io/v1/storageclasses', {
    metadata: { name },
    provisioner: 'kubernetes.io/no-provisioner',
  });
}

/** A claim nothing binds (no controller manager, no provisioner): it waits on its StorageClass, then stays Pending. */
function claim(name: string, storageClassName: string): object {
  return {
    metadata: { name },
    spec: {
      accessModes: ['ReadWriteOnce'],
      storageClassName,
      resources: { requests: { storage: '1Gi' } },
    },
  };
}

const podSpec = (claimName: string) => ({
  automountServiceAccountToken: false,
  containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
  volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
});

function pod(name: string, claimName: string, owner?: { kind: string; name: string; uid: string }): object {
  return {
    metadata: {
      name,
      labels: { app: 'api' },
      ...(owner
        ? { ownerReferences: [{ apiVersion: 'apps/v1', ...owner, controller: true, blockOwnerDeletion: true }] }
        : {}),
    },
    spec: podSpec(claimName),
  };
}

const SC = (name: string) => `StorageClass.storage.k8s.io//${name}`;

function entryOf(entries: StuckEntry[], key: string): StuckEntry | undefined {
  return entries.find((e) => e.key === key);
}

/** run starts bin/refwatch standalone against the test cluster and resolves once it exits. */
function run(args: string[]): Promise<CliRun> {
  return runCli(args, {
    env: { PATH: process.env.PATH ?? '', HOME: dir, KUBECONFIG: path.join(dir, 'kubeconfig.json') },
  });
}

describe(`root cause through chains on the ${clusterKind} cluster`, () => {
  it('a Pod waiting on a claim that waits on a missing StorageClass names the StorageClass, and the path', async () => {
    const ns = await cluster.newNamespace('root-cause');
    const good = `${ns}-fast`;
    const typo = `${ns}-fst`;
    await storageClass(good);
    await create(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, claim('uploads', typo));
    await create(`/api/v1/namespaces/${ns}/pods`, pod('uploader', 'uploads'));
    const manager = await observe();

    const podKey = `Pod/${ns}/uploader`;
    const claimKey = `PersistentVolumeClaim/${ns}/uploads`;
    await expect
      .poll(() => entryOf(stuck(manager, { olderThan: 0 }), podKey)?.rootCause, { timeout: 30_000 })
      .toMatchObject({ referent: SC(typo), state: 'NotFound' });
    const expected = {
      path: [podKey, claimKey, SC(typo)],
      referent: SC(typo),
      state: 'NotFound',
      reason: 'NotFound',
      message: `${SC(typo)} not found; did you mean ${good}?`,
      fix: `set spec.storageClassName to ${good}, or create ${SC(typo)}`,
    };
    const entries = stuck(manager, { olderThan: 0 });
    expect(entryOf(entries, podKey)).toMatchObject({ referent: claimKey, reason: 'NotReady', rootCause: expected });
    expect(entryOf(entries, claimKey)).toMatchObject({ referent: SC(typo), reason: 'NotFound' });
    expect(entryOf(entries, claimKey)?.rootCause).toBeUndefined();
    const explained = explain(manager, podKey);
    expect(explained.ok && explained.value.controllers[0]!.rootCause).toEqual(expected);
    const mine = entries.filter((e) => e.key.includes(`/${ns}/`));
    expect(groupByRootCause(mine).map(groupTitle)).toEqual([`2 referrers blocked by ${SC(typo)}`]);

    // The CLI, standalone from the kubeconfig, says the same.
    const cli = await run(['explain', 'pod/uploader', '-n', ns, '--rules', rulesFile]);
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(1);
    expect(cli.stdout).toContain(`root cause: ${podKey} → ${claimKey} → ${SC(typo)}: ${expected.message}`);
    const grouped = await run(['stuck', '-n', ns, '--older-than', '0s', '--by-root-cause', '--rules', rulesFile]);
    expect(grouped.code).toBe(1);
    expect(grouped.stdout.split('\n')[0]).toBe(`2 referrers blocked by ${SC(typo)}: NotFound ${expected.message}`);
    const tree = await run(['tree', 'pod/uploader', '-n', ns, '--rules', rulesFile]);
    expect(tree.stdout).toMatch(new RegExp(`└── ${SC(typo).replace(/\./g, '\\.')} ◀ root cause`));

    // The StorageClass created under the name the claim gives: the chain is gone; the claim itself (Pending) holds the Pod.
    await storageClass(typo);
    await expect
      .poll(() => manager.changelog.get('referrer', `rules/PersistentVolumeClaim|${claimKey}`)?.state, {
        timeout: 30_000,
      })
      .toBe('Resolved');
    const after = entryOf(stuck(manager, { olderThan: 0 }), podKey);
    expect(after).toMatchObject({ referent: claimKey, reason: 'NotReady' });
    expect(after?.rootCause).toBeUndefined();
  });

  it.runIf(clusterKind === 'real')(
    'a Deployment, its ReplicaSet and its Pods stuck on one cause are one line: "and its ReplicaSet and 2 Pods"',
    async () => {
      const ns = await cluster.newNamespace('root-cause-owners');
      const typo = `${ns}-fst`;
      await storageClass(`${ns}-fast`);
      await create(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, claim('data', typo));
      const template = { metadata: { labels: { app: 'api' } }, spec: podSpec('data') };
      const selector = { matchLabels: { app: 'api' } };
      const deployment = await create(`/apis/apps/v1/namespaces/${ns}/deployments`, {
        metadata: { name: 'api' },
        spec: { replicas: 2, selector, template },
      });
      const rs = await create(`/apis/apps/v1/namespaces/${ns}/replicasets`, {
        metadata: {
          name: 'api-7c9',
          labels: { app: 'api' },
          ownerReferences: [
            { apiVersion: 'apps/v1', kind: 'Deployment', name: 'api', uid: deployment.metadata.uid, controller: true },
          ],
        },
        spec: { replicas: 2, selector, template },
      });
      for (const name of ['api-7c9-a', 'api-7c9-b'])
        await create(
          `/api/v1/namespaces/${ns}/pods`,
          pod(name, 'data', { kind: 'ReplicaSet', name: 'api-7c9', uid: rs.metadata.uid }),
        );
      const manager = await observe();

      const deployKey = `Deployment.apps/${ns}/api`;
      const mine = () => stuck(manager, { olderThan: 0 }).filter((e) => e.key.includes(`/${ns}/`));
      // Polled whole: the Pods and the ReplicaSet can be stuck on the claim before the claim's own reconcile has
      // found the StorageClass missing, and only then is the StorageClass their root cause.
      const picture = () => mine().map((e) => [e.key, e.rootCause?.referent ?? e.referent, e.workload]);
      await expect
        .poll(() => picture().sort(), { timeout: 30_000 })
        .toEqual([
          [deployKey, SC(typo), undefined],
          [`PersistentVolumeClaim/${ns}/data`, SC(typo), undefined],
          [`Pod/${ns}/api-7c9-a`, SC(typo), deployKey],
          [`Pod/${ns}/api-7c9-b`, SC(typo), deployKey],
          [`ReplicaSet.apps/${ns}/api-7c9`, SC(typo), deployKey],
        ]);
      const entries = mine();
      const line = foldWorkloads(entries).find((i) => i.entry.key === deployKey)!;
      expect(ownedText(line.owned)).toBe('and its ReplicaSet and 2 Pods');
      expect(foldWorkloads(entries)).toHaveLength(2);
      expect(groupByRootCause(entries).map(groupTitle)).toEqual([`5 referrers blocked by ${SC(typo)}`]);
    },
  );
});
