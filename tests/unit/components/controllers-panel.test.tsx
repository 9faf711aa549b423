import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { ControllersPanel } from '@/components/panels/ControllersPanel';
import type { ReferenceControllerEntity } from '@/lib/changelog/entities';

const NOW = 1_800_000_000_000;

const observer: ReferenceControllerEntity = {
  id: 'HealthCheck.probes.example.com',
  kind: 'HealthCheck.probes.example.com',
  state: 'Active',
  reason: 'first reference; polling every 5000 ms',
  references: 3,
  referents: 2,
  startedAt: NOW - 60_000,
  dispatches: 4,
  errors: [
    {
      reason: 'ObserveTimeout',
      message: 'HealthCheck.probes.example.com/shop/hung: no answer within 500 ms',
      at: NOW - 2_000,
    },
  ],
  history: [],
  source: 'poll',
  intervalMs: 5_000,
  polls: 17,
  lastPollAt: NOW - 3_000,
};

describe('ControllersPanel', () => {
  it('shows an observer like a reference controller: its poll interval, last poll, polls and errors', () => {
    const html = renderToStaticMarkup(<ControllersPanel controllers={[observer]} now={NOW} onSelectKind={() => {}} />);
    expect(html).toContain('Polled every 5 s · last poll 3 s ago');
    expect(html).toMatch(/Referents polled<\/dt><dd>2</);
    expect(html).toMatch(/Polls<\/dt><dd>17</);
    expect(html).toContain('ObserveTimeout: HealthCheck.probes.example.com/shop/hung: no answer within 500 ms');
    expect(html).not.toContain('Priming');
  });

  it('keeps showing a watch as before', () => {
    const { source: _source, intervalMs: _i, polls: _p, lastPollAt: _l, ...watch } = observer;
    const html = renderToStaticMarkup(
      <ControllersPanel
        controllers={[{ ...watch, kind: 'Database.demo.refwatch.dev', id: 'Database.demo.refwatch.dev', errors: [] }]}
        now={NOW}
        onSelectKind={() => {}}
      />,
    );
    expect(html).toContain('Watching since');
    expect(html).toMatch(/Referents cached<\/dt><dd>2</);
  });
});
