import { describe, expect, it } from 'vitest';
import { readClusterRules } from '@/lib/cli/cluster-rules';
import { KubeRequestError, type KubeClient } from '@/lib/kube';

/** A client whose one list answers `answer` (or throws it), recording the paths asked. */
function clientAnswering(answer: unknown): KubeClient & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    getJSON: (p: string) => {
      asked.push(p);
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
    redact: (s: string) => s.replace('s3cr3t', '<redacted>'),
  } as unknown as KubeClient & { asked: string[] };
}

const widgetRules = (path: string) => ({
  rules: [
    { referrer: { group: 'acme.example', kind: 'Widget' }, references: [{ path, referent: { kind: 'Secret' } }] },
  ],
});

describe('readClusterRules', () => {
  it('lists every ReferenceRules once; a good one joins the rules, a bad one is reported with its field and skipped', async () => {
    const client = clientAnswering({
      items: [
        { metadata: { namespace: 'team-b', name: 'broken' }, spec: widgetRules('spec..name') },
        { metadata: { namespace: 'platform', name: 'acme' }, spec: widgetRules('spec.secretRef.name') },
        { metadata: { namespace: 'team-c', name: 'empty' } },
      ],
    });
    const r = await readClusterRules(client, 1_000);
    expect(client.asked).toEqual(['/apis/refwatch.dev/v1alpha1/referencerules']);
    expect(r.documents.map((d) => d.name)).toEqual(['ReferenceRules platform/acme']);
    expect(r.documents[0]!.rules[0]!.referrer).toEqual({ group: 'acme.example', kind: 'Widget' });
    expect(r.problems).toEqual([
      expect.stringMatching(/^ReferenceRules team-b\/broken spec\.rules\[0\]\.references\[0\]\.path: "spec\.\.name": /),
      'ReferenceRules team-c/empty spec: is required; give it rules:, conventions: or kinds: as in a rules file',
    ]);
    expect(r.summary).toBe('ReferenceRules: 3 read from the cluster, 1 applied, 2 rejected (see the warnings)');
  });

  it('reads none, with no error, when the cluster does not serve ReferenceRules', async () => {
    const r = await readClusterRules(
      clientAnswering(new KubeRequestError(404, 'the server could not find the requested resource', { url: '/x' })),
      1_000,
    );
    expect(r).toEqual({
      documents: [],
      problems: [],
      summary:
        'ReferenceRules: none read, the cluster does not serve refwatch.dev/v1alpha1 referencerules (no CRD); only the packs and --rules files apply',
    });
  });

  it('reads none when RBAC forbids it, and names the rule to grant', async () => {
    const r = await readClusterRules(
      clientAnswering(
        new KubeRequestError(403, 'referencerules.refwatch.dev is forbidden: User "s3cr3t" cannot list', {
          url: '/x',
          reason: 'Forbidden',
        }),
      ),
      1_000,
    );
    expect(r.documents).toEqual([]);
    expect(r.summary).toBe(
      'ReferenceRules: not read (Forbidden): referencerules.refwatch.dev is forbidden: User "<redacted>" cannot list; grant apiGroups: ["refwatch.dev"], resources: ["referencerules"], verbs: ["list"]; only the packs and --rules files apply',
    );
  });
});
