import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Admission } from '@/lib/admission';
import { MemoryInformerSource } from '@/lib/engine';
import { builtinPacks, builtinRuleSet, PACK_NAMES, type PackName } from '@/lib/rules';
import {
  generatedFiles,
  HELM_FILE,
  KUSTOMIZE_FILE,
  KUSTOMIZE_PACKS,
  packResources,
  rulesFor,
  type WebhookRule,
} from '@/scripts/admission-rules';

const root = path.resolve(import.meta.dirname, '../../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

/** isPluralOf: the REST resource is the kind's lowercase plural (pods, ingresses, policies). */
function isPluralOf(resource: string, kind: string): boolean {
  const k = kind.toLowerCase();
  return resource === `${k}s` || resource === `${k}es` || (k.endsWith('y') && resource === `${k.slice(0, -1)}ies`);
}

const flatten = (rules: readonly WebhookRule[]) =>
  rules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.map((res) => `${g}/${res}`))).sort();

/** referrerKindsOf reads from the compiled rule set the referrer kinds of name rules that wait on their referents. */
function referrerKindsOf(packs: PackName[]): string[] {
  const rs = builtinRuleSet(packs);
  return [...rs.rules.entries()].filter(([, rules]) => rules.some((r) => !r.produces)).map(([key]) => key);
}

describe('the webhook rules derived from the rule packs', () => {
  it(`the committed chart and kustomize rules are what scripts/admission-rules.ts generates (run \`npx tsx scripts/admission-rules.ts\` after changing a pack)`, () => {
    for (const [file, text] of Object.entries(generatedFiles())) expect(read(file), file).toBe(text);
  });

  it.each(PACK_NAMES.map((p) => [p]))(
    '%s: every referrer kind whose rules name a referent is sent to the webhook, and nothing else',
    (pack) => {
      const sent = flatten(rulesFor([pack]));
      const referrers = referrerKindsOf([pack]).filter((k) => !k.endsWith('.admissionregistration.k8s.io'));
      for (const key of referrers) {
        const dot = key.indexOf('.');
        const [kind, group] = dot < 0 ? [key, ''] : [key.slice(0, dot), key.slice(dot + 1)];
        expect(
          sent.some((s) => s.startsWith(`${group}/`) && isPluralOf(s.slice(group.length + 1), kind)),
          `${key} is not in the webhook's rules`,
        ).toBe(true);
      }
      // Beyond the referrers only the workloads whose Pod template the Pod rules check (ReplicationController).
      const extra = sent.filter(
        (s) => !referrers.some((k) => isPluralOf(s.slice(s.indexOf('/') + 1), k.split('.')[0]!)),
      );
      expect(extra).toEqual(pack === 'core' ? ['/replicationcontrollers'] : []);
    },
  );

  it('leaves out the admission configuration kinds, which kube-apiserver never sends to webhooks', () => {
    expect(referrerKindsOf(['core'])).toContain('ValidatingWebhookConfiguration.admissionregistration.k8s.io');
    expect(flatten(rulesFor(['core'])).filter((s) => s.startsWith('admissionregistration.k8s.io/'))).toEqual([]);
  });

  it('a referrer added to a pack is a webhook rule, without a hand edit; a selector referrer is not', () => {
    const doc = builtinPacks.core;
    const withRules = (...rules: unknown[]) => ({ ...doc, rules: [...doc.rules, ...rules] }) as typeof doc;
    const ids = (d: typeof doc) => packResources(d).map((r) => `${r.apiGroup}/${r.resource}`);
    expect(ids(doc)).not.toContain('policy/poddisruptionbudgets');
    const named = withRules({
      referrer: { group: 'policy', kind: 'PodDisruptionBudget' },
      references: [{ path: 'spec.secretName', referent: { group: '', kind: 'Secret' } }],
    });
    expect(ids(named)).toEqual([...ids(doc), 'policy/poddisruptionbudgets'].sort());
    const selector = withRules({
      referrer: { group: '', kind: 'Service' },
      references: [{ selector: 'spec.selector', form: 'map', referent: { group: '', kind: 'Pod' } }],
    });
    expect(ids(selector)).toEqual(ids(doc));
    const unknown = withRules({
      referrer: { group: 'example.com', kind: 'Widget' },
      references: [{ path: 'spec.secretName', referent: { group: '', kind: 'Secret' } }],
    });
    expect(() => packResources(unknown)).toThrow(
      /pack core: kind Widget.example.com has no REST resource in scripts\/rbac.ts RESOURCES; add it there/,
    );
  });

  it("the chart renders each pack's rules when, and only when, that pack is enabled", () => {
    const template = read(HELM_FILE);
    const blocks = [
      ...template.matchAll(
        /\{\{- if (.+?) \}\}\n {6}- apiGroups: \[("[^"]*")\]\n {8}apiVersions: \["\*"\]\n {8}operations: \["CREATE", "UPDATE"\]\n {8}resources: \[(.+?)\]\n {8}scope: "\*"\n {6}\{\{- end \}\}/g,
      ),
    ];
    const rendered = (packs: PackName[]) =>
      blocks
        .filter(([, cond]) =>
          [...cond!.matchAll(/has "([\w-]+)" \$packs/g)].some((m) => packs.includes(m[1] as PackName)),
        )
        .flatMap(([, , group, resources]) =>
          (JSON.parse(`[${resources}]`) as string[]).map((r) => `${JSON.parse(group!)}/${r}`),
        )
        .sort();
    expect(blocks.length).toBeGreaterThan(0);
    for (const p of PACK_NAMES) expect(rendered([p]), p).toEqual(flatten(rulesFor([p])));
    expect(rendered([...PACK_NAMES])).toEqual([...new Set(flatten(rulesFor(PACK_NAMES)))].sort());
  });

  it("the kustomize webhook lists the rules of the base's packs", () => {
    const base = read('deploy/kubernetes/base/deployment.yaml');
    expect(base).toMatch(new RegExp(`name: REFWATCH_RULE_PACKS\\n\\s+value: ${KUSTOMIZE_PACKS.join(',')}\\n`));
    const webhook = parse(read(KUSTOMIZE_FILE)) as { webhooks: { rules: WebhookRule[] }[] };
    expect(webhook.webhooks[0]!.rules).toEqual(rulesFor(KUSTOMIZE_PACKS));
  });

  it('every kind the webhook is sent draws a warning from the admission check when it names a missing Secret', async () => {
    // The rules promise checks: a Deployment or a ReplicationController the webhook is sent must be judged.
    const source = new MemoryInformerSource({ priming: 'sync' });
    const admission = new Admission({ source, ruleSet: builtinRuleSet(['core']) });
    await admission.prime();
    try {
      const template = {
        spec: { containers: [{ name: 'c', image: 'x' }], volumes: [{ name: 'v', secret: { secretName: 'gone' } }] },
      };
      for (const [apiVersion, kind] of [
        ['apps/v1', 'Deployment'],
        ['v1', 'ReplicationController'],
      ] as const) {
        const verdict = admission.check('CREATE', {
          apiVersion,
          kind,
          metadata: { name: 'x', namespace: 'default' },
          spec: { template },
        });
        expect(verdict.warnings, kind).toEqual([
          'spec.template.spec.volumes[0].secret.secretName: Secret default/gone does not exist yet',
        ]);
      }
    } finally {
      await admission.stop();
      await source.stop();
    }
  });
});
