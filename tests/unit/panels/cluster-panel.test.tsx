import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { ClusterPanel } from '@/components/panels/ClusterPanel';
import type { ClusterInfo } from '@/lib/changelog/wire';

const cluster: ClusterInfo = {
  mode: 'kubeconfig',
  server: 'https://127.0.0.1:6443',
  context: 'team-a-user',
  reachable: true,
};

describe('ClusterPanel', () => {
  it('says which kinds are watched in fewer namespaces than asked, and why', () => {
    const note = 'Pod: cluster-wide list forbidden; watching namespace team-a (from the context)';
    const html = renderToStaticMarkup(
      <ClusterPanel cluster={{ ...cluster, scopeFallbacks: [note] }} watches={[]} queues={[]} />,
    );
    expect(html).toContain('<dt>Scope</dt>');
    expect(html).toContain(note);
  });

  it('shows no scope line while every kind is watched as asked', () => {
    const html = renderToStaticMarkup(<ClusterPanel cluster={cluster} watches={[]} queues={[]} />);
    expect(html).not.toContain('Scope');
  });

  it('lists ReferenceRules objects, a rejected one marked as an error with its problems naming the field', () => {
    const problem = 'ReferenceRules team-b/broken spec.rules[1].references[0].path: unexpected "."';
    const html = renderToStaticMarkup(
      <ClusterPanel
        cluster={{
          ...cluster,
          referenceRules: [
            {
              message: 'ReferenceRules platform/acme: applied (generation 2): 1 rule for Widget.acme.example',
              ok: true,
              problems: [],
            },
            {
              message: 'ReferenceRules team-b/broken: rejected, nothing of it applies',
              ok: false,
              problems: [problem],
            },
          ],
        }}
        watches={[]}
        queues={[]}
      />,
    );
    expect(html).toContain('<dt>ReferenceRules</dt>');
    expect(html).toContain(
      '<li>ReferenceRules platform/acme: applied (generation 2): 1 rule for Widget.acme.example</li>',
    );
    expect(html).toMatch(/<li class="[^"]+">ReferenceRules team-b\/broken: rejected, nothing of it applies<ul><li>/);
    expect(html).toContain(problem.replace(/"/g, '&quot;'));
  });

  it('shows no ReferenceRules line when there is nothing to say', () => {
    const html = renderToStaticMarkup(<ClusterPanel cluster={cluster} watches={[]} queues={[]} />);
    expect(html).not.toContain('ReferenceRules');
  });
});
