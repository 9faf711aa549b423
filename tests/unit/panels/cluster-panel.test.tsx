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
});
