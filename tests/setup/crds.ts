import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { KubeRequestError, type KubeClient } from '@/lib/kube';

/** Crd is the part of a CustomResourceDefinition the tests read. */
export interface Crd {
  metadata: { name: string };
  spec: { group: string; versions: { name: string }[]; names: { plural: string } };
}

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/crds');

/** packCrds reads the CRDs this project wrote for a pack's kinds (tests/fixtures/crds/PACK.yaml). */
export function packCrds(pack: string): Crd[] {
  return parseAllDocuments(readFileSync(path.join(FIXTURES, `${pack}.yaml`), 'utf8')).map((d) => d.toJS() as Crd);
}

/**
 * installCrds creates the CRDs and waits until discovery lists each one's resource. It returns the names it
 * created: the real tier shares one cluster between files, and a CRD another file installed first is left to it.
 */
export async function installCrds(client: KubeClient, crds: readonly Crd[]): Promise<string[]> {
  const created: string[] = [];
  for (const crd of crds) {
    const made = await client
      .request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd })
      .then(
        () => true,
        (e: unknown) => {
          if (e instanceof KubeRequestError && e.status === 409) return false;
          throw e;
        },
      );
    if (made) created.push(crd.metadata.name);
  }
  for (const crd of crds) {
    const gv = `/apis/${crd.spec.group}/${crd.spec.versions[0]!.name}`;
    for (let served = false; !served;) {
      const list = (await client.request('GET', gv).catch(() => undefined)) as
        { resources?: { name: string }[] } | undefined;
      served = list?.resources?.some((r) => r.name === crd.spec.names.plural) ?? false;
      if (!served) await new Promise((r) => setTimeout(r, 100));
    }
  }
  return created;
}
