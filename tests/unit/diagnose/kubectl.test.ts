import { describe, expect, it } from 'vitest';
import { kubectlCommands } from '@/lib/diagnose';

describe('kubectlCommands', () => {
  it('creates what is missing when kubectl can, and lists the kind otherwise', () => {
    expect(kubectlCommands({ referent: 'Secret/shop/db-password', state: 'NotFound' })).toEqual([
      'kubectl -n shop create secret generic db-password --from-literal=KEY=VALUE',
    ]);
    expect(kubectlCommands({ referent: 'ConfigMap/shop/settings', state: 'NotFound' })).toEqual([
      'kubectl -n shop create configmap settings --from-literal=KEY=VALUE',
    ]);
    expect(kubectlCommands({ referent: 'ServiceAccount/shop/web', state: 'NotFound' })).toEqual([
      'kubectl -n shop create serviceaccount web',
    ]);
    expect(kubectlCommands({ referent: 'Database.demo.refwatch.dev/shop/ordrs', state: 'NotFound' })).toEqual([
      'kubectl -n shop get databases.demo.refwatch.dev',
    ]);
  });

  it('looks at a referent that is not ready, by the resource discovery names when given', () => {
    expect(kubectlCommands({ referent: 'Database.demo.refwatch.dev/shop/orders', state: 'NotReady' })).toEqual([
      'kubectl -n shop describe databases.demo.refwatch.dev orders',
      'kubectl -n shop get databases.demo.refwatch.dev orders -o yaml',
    ]);
    expect(kubectlCommands({ referent: 'Endpoints/shop/web', state: 'NotReady' }, 'endpoints')[0]).toBe(
      'kubectl -n shop describe endpoints web',
    );
    expect(kubectlCommands({ referent: 'StorageClass.storage.k8s.io//fast', state: 'NotReady' })[0]).toBe(
      'kubectl describe storageclasses.storage.k8s.io fast',
    );
  });

  it('finds a missing CRD, checks a permission, and has nothing to run for Ready or a priming cache', () => {
    expect(kubectlCommands({ referent: 'Widget.example.com/shop/w', state: 'KindUnknown' })).toEqual([
      'kubectl get crd widgets.example.com',
      'kubectl api-resources --api-group=example.com',
    ]);
    expect(kubectlCommands({ referent: 'Secret/shop/x', state: 'Forbidden' })).toEqual([
      'kubectl auth can-i watch secrets -n shop',
    ]);
    expect(kubectlCommands({ referent: 'Secret/shop/x', state: 'Ready' })).toEqual([]);
    expect(kubectlCommands({ referent: 'Secret/shop/x', state: 'NotPrimed' })).toEqual([]);
  });
});
