import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { parseObjectDetails } from '@/components/data/objectDetails';
import { ObjectDetails, ObjectDetailsBody } from '@/components/panels/ObjectDetails';

const NOW = 1_800_000_000_000;
const KEY = 'Pod/shop/web';

const answer = {
  key: KEY,
  source: 'cluster',
  yaml: 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n',
  ownerReferences: [
    {
      key: 'ReplicaSet.apps/shop/web-7d9f',
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      name: 'web-7d9f',
      controller: true,
    },
    { key: 'ConfigMap/shop/owner', apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', controller: false },
  ],
  events: [
    {
      type: 'Warning',
      reason: 'FailedMount',
      message: 'secret "api-key" not found',
      count: 3,
      at: NOW - 42_000,
      source: 'kubelet',
    },
  ],
  history: [
    {
      at: NOW - 60_000,
      role: 'referrer',
      controller: 'rules',
      state: 'NotFound',
      reason: 'NotFound',
      message: 'Secret/shop/api-key not found',
    },
  ],
  fixes: [
    {
      referent: 'Secret/shop/api-key',
      fieldPath: 'spec.volumes[0].secret.secretName',
      state: 'NotFound',
      message: 'not found',
      fix: 'create Secret/shop/api-key',
      commands: ['kubectl -n shop create secret generic api-key --from-literal=KEY=VALUE'],
    },
  ],
};

function render(setup: (client: QueryClient) => void, commandsOnly = false): string {
  const client = new QueryClient();
  setup(client);
  return renderToStaticMarkup(
    <QueryClientProvider client={client}>
      <ObjectDetails
        objectKey={KEY}
        version="v"
        now={NOW}
        inGraph={(k) => k === 'ConfigMap/shop/owner'}
        onSelectKey={() => {}}
        commandsOnly={commandsOnly}
      />
    </QueryClientProvider>,
  );
}

describe('ObjectDetails', () => {
  it('shows the fix command with a copy button, the Events, the state history, the owners and the YAML', () => {
    const html = render((c) => c.setQueryData(['objectDetails', KEY, 'v'], parseObjectDetails(answer, KEY)));
    expect(html).toContain('kubectl -n shop create secret generic api-key --from-literal=KEY=VALUE');
    expect(html).toContain(
      'aria-label="Copy command kubectl -n shop create secret generic api-key --from-literal=KEY=VALUE"',
    );
    expect(html).toContain('create Secret/shop/api-key');
    expect(html).toMatch(
      /<li data-type="Warning">.*>Warning<\/span><span class="mono">FailedMount<\/span><span[^>]*>42 s ago ×3 · kubelet<\/span>.*secret &quot;api-key&quot; not found<\/p><\/li>/,
    );
    expect(html).toContain('1 m ago');
    expect(html).toContain('as referrer of rules');
    // An owner in the graph is a link; one outside it is plain text.
    expect(html).toMatch(/<button[^>]*title="ConfigMap\/shop\/owner"[^>]*>ConfigMap owner<\/button>/);
    expect(html).toContain('title="ReplicaSet.apps/shop/web-7d9f (not in the graph)"');
    expect(html).toContain('kind: Pod');
    expect(html).toContain('aria-label="Copy YAML"');
  });

  it('leaves the fix text to the references section when told to', () => {
    const html = render((c) => c.setQueryData(['objectDetails', KEY, 'v'], parseObjectDetails(answer, KEY)), true);
    expect(html).toContain('kubectl -n shop create secret generic api-key');
    expect(html).not.toContain('>create Secret/shop/api-key<');
  });

  it('says what is forbidden, with the rule to grant, instead of failing', () => {
    const rule = 'apiGroups: [""], resources: ["events"], verbs: ["list"]';
    const html = render((c) =>
      c.setQueryData(
        ['objectDetails', KEY, 'v'],
        parseObjectDetails(
          {
            ...answer,
            events: [],
            eventsProblem: { reason: 'Forbidden', message: 'refwatch may not list Events', rule },
          },
          KEY,
        ),
      ),
    );
    expect(html).toContain('refwatch may not list Events');
    expect(html).toContain('aria-label="Copy RBAC rule"');
    expect(html).not.toContain('No events about this object.');
  });

  it('shows a loading state, then an error state with the server’s message and a retry', () => {
    expect(render(() => {})).toContain('Loading details…');
    const props = { now: NOW, inGraph: () => false, onSelectKey: () => {}, commandsOnly: false };
    const html = renderToStaticMarkup(
      <ObjectDetailsBody
        state={{ status: 'error', message: 'key "Pod/web" must have three parts', retry: () => {} }}
        {...props}
      />,
    );
    expect(html).toContain('Details unavailable: key &quot;Pod/web&quot; must have three parts');
    expect(html).toContain('>Retry</button>');
  });

  it('reads a malformed answer as empty instead of throwing', () => {
    const d = parseObjectDetails(
      { events: [null, { count: 'x' }], fixes: [{ commands: [1, 'kubectl get pods'] }], history: 'no' },
      KEY,
    );
    expect(d.key).toBe(KEY);
    expect(d.events).toEqual([{ type: '', reason: '', message: '', count: 1, at: 0, source: '' }]);
    expect(d.fixes[0]!.commands).toEqual(['kubectl get pods']);
    expect(d.history).toEqual([]);
  });
});

describe('the stored timeline in the details panel', () => {
  it('reads the server’s timeline and shows it, with what changed while refwatch was down', () => {
    const timeline = [
      { id: 1, at: NOW - 60_000, type: 'referrer', object: KEY, state: 'Resolved', controller: 'rules/Pod' },
      {
        id: 2,
        at: NOW - 1000,
        type: 'referent',
        object: 'Secret/shop/db-password',
        state: 'NotFound',
        reason: 'WhileDown',
        message: 'Secret/shop/db-password was deleted while refwatch was down (last seen 14:02:11)',
      },
    ];
    const parsed = parseObjectDetails({ ...answer, timeline }, KEY);
    expect(parsed.timeline?.map((t) => `${t.id} ${t.type} ${t.object} ${t.state}`)).toEqual([
      `1 referrer ${KEY} Resolved`,
      '2 referent Secret/shop/db-password NotFound',
    ]);
    const html = render((c) => c.setQueryData(['objectDetails', KEY, 'v'], parsed));
    expect(html).toContain('data-testid="details-timeline"');
    expect(html).toContain('Pod web Resolved');
    expect(html).toContain('Secret db-password deleted while refwatch was down');
    expect(html).toContain('(last seen 14:02:11)');
  });

  it('says why the timeline could not be read', () => {
    const parsed = parseObjectDetails({ ...answer, timelineProblem: 'history is unavailable: disk I/O error' }, KEY);
    const html = render((c) => c.setQueryData(['objectDetails', KEY, 'v'], parsed));
    expect(html).toContain('history is unavailable: disk I/O error');
  });
});
