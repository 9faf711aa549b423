import { afterEach, describe, expect, it, vi } from 'vitest';
import { explain, stuck, type ReferenceExplanation } from '@/lib/diagnose';
import { Manager, MemoryInformerSource } from '@/lib/engine';
import type { KubeObject } from '@/lib/model';
import { builtinRuleSet, observeRuleSet } from '@/lib/rules';

// An Ingress waiting on a TLS Secret that cert-manager has not issued yet
// should hear about the Certificate that produces it, and what blocks that.

const CM = 'cert-manager.io';
let manager: Manager | undefined;
afterEach(async () => {
  await manager?.stop();
  manager = undefined;
});

const ingress: KubeObject = {
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { name: 'shop', namespace: 'shop' },
  spec: { tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }] },
};
const certificate: KubeObject = {
  apiVersion: `${CM}/v1`,
  kind: 'Certificate',
  metadata: { name: 'shop', namespace: 'shop' },
  spec: { secretName: 'shop-tls', issuerRef: { name: 'letsencrypt-prd', kind: 'ClusterIssuer', group: CM } },
};
const issuer: KubeObject = {
  apiVersion: `${CM}/v1`,
  kind: 'ClusterIssuer',
  metadata: { name: 'letsencrypt-prod' },
  spec: { acme: { privateKeySecretRef: { name: 'acme-key' } } },
  status: { conditions: [{ type: 'Ready', status: 'True' }] },
};

async function start(objects: KubeObject[]): Promise<MemoryInformerSource> {
  const source = new MemoryInformerSource({ priming: 'sync' });
  const observer = observeRuleSet(builtinRuleSet(['core', 'cert-manager'], []));
  manager = new Manager({ source, statsIntervalMs: 0, readiness: (kind) => observer.readiness(kind) });
  observer.attach(manager);
  manager.start();
  for (const o of objects) source.apply(o);
  return source;
}

async function tlsReference(): Promise<ReferenceExplanation> {
  let found: ReferenceExplanation | undefined;
  await vi.waitFor(() => {
    const r = explain(manager!, 'Ingress.networking.k8s.io/shop/shop');
    if (!r.ok) throw r.error;
    found = r.value.controllers[0]?.references.find((x) => x.fieldPath === 'spec.tls[0].secretName');
    expect(found?.producedBy).toBe(`Certificate.${CM}/shop/shop`);
  });
  return found!;
}

describe('a missing referent that another object produces', () => {
  it('names the producer and follows it down to the issuer with a typo', async () => {
    await start([issuer, certificate, ingress]);
    const ref = await tlsReference();
    expect(ref).toMatchObject({ state: 'NotFound', reason: 'NotProduced', referent: 'Secret/shop/shop-tls' });
    expect(ref.message).toBe(
      `Secret/shop/shop-tls not found: it is produced by Certificate.${CM}/shop/shop (spec.secretName), which waits on ClusterIssuer.${CM}//letsencrypt-prd: ClusterIssuer.${CM}//letsencrypt-prd not found; did you mean letsencrypt-prod?`,
    );
    expect(ref.fix).toBe(`set spec.issuerRef.name to letsencrypt-prod, or create ClusterIssuer.${CM}//letsencrypt-prd`);
    // The Certificate does not wait on the Secret it produces: its only blocker is the issuer.
    const certStuck = stuck(manager!, { olderThan: 0 }).find((e) => e.key === `Certificate.${CM}/shop/shop`);
    expect(certStuck?.referent).toBe(`ClusterIssuer.${CM}//letsencrypt-prd`);
  });

  it('says the producer is ready and its controller has yet to create the referent', async () => {
    await start([
      issuer,
      {
        ...certificate,
        spec: { ...(certificate.spec as object), issuerRef: { name: 'letsencrypt-prod', kind: 'ClusterIssuer' } },
      },
      ingress,
    ]);
    let ref: ReferenceExplanation | undefined;
    await vi.waitFor(async () => {
      ref = await tlsReference();
      expect(ref.message).toContain('whose references are all ready');
    });
    expect(ref!.message).toBe(
      `Secret/shop/shop-tls not found: it is produced by Certificate.${CM}/shop/shop (spec.secretName), whose references are all ready`,
    );
    expect(ref!.fix).toBe(
      `wait for the controller of Certificate.${CM} to create it; if it does not, see what it reports (kubectl describe certificates.${CM} -n shop shop)`,
    );
  });

  it('forgets the producer once it is deleted', async () => {
    const source = await start([issuer, certificate, ingress]);
    await tlsReference();
    source.delete(`Certificate.${CM}/shop/shop`);
    await vi.waitFor(() => {
      const r = explain(manager!, 'Ingress.networking.k8s.io/shop/shop');
      if (!r.ok) throw r.error;
      const ref = r.value.controllers[0]?.references.find((x) => x.fieldPath === 'spec.tls[0].secretName');
      expect(ref?.producedBy).toBeUndefined();
      expect(ref?.reason).toBe('NotFound');
    });
  });
});
