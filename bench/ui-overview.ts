// npx tsx bench/ui-overview.ts: the dashboard's first screen on a registry of 300,000 referrers and 1,000,000
// references, in headless Chromium. The registry is synthetic but lives in the real ChangeLog with the real
// ReferrerSummary following it; /api/v1/summary and the overview stream are answered by the real route functions
// (server/api.ts) and handed to the page with page.route. The page is the production build (REFWATCH_UI_URL: one already up).
// Targets: the first screen within 2 s on a million references, and <= 2 MiB over the wire, so it
// opens as fast through kubectl port-forward or a VPN as on loopback.
import { chromium } from '@playwright/test';
import {
  ChangeLog,
  type ReferenceEntity,
  type ReferrerEntity,
  type ReferentEntity,
  type ReferrerState,
} from '../lib/changelog';
import { getStream, getSummary } from '../server/api';
import type { Runtime } from '../server/runtime';
import { ReferrerSummary } from '../server/summary';
import { SummaryFeed } from '../server/summary-feed';
import { report, result } from './report';
import { startServer, waitFor } from './browser/page';

const OVERVIEW_RENDER = 'refwatch:overview:first-render';
const REFERRERS = 300_000;
const REFERENCES = 1_000_000;
const NAMESPACES = 1_000;
const LOADS = 3;
const STUCK_THRESHOLD_MS = 30_000;

const REFERRER_KINDS = [
  'Pod',
  'App.demo.refwatch.dev',
  'Ingress.networking.k8s.io',
  'RoleBinding.rbac.authorization.k8s.io',
];
const REFERENT_KINDS = ['Secret', 'ConfigMap', 'Database.demo.refwatch.dev', 'Service'];

/** fill stores the synthetic registry in a change log the summary already follows, as the engine would. */
function fill(log: ChangeLog, now: number): void {
  const state = (i: number): ReferrerState =>
    i % 100 < 90 ? 'Resolved' : i % 100 < 95 ? 'Waiting' : i % 100 < 98 ? 'NotFound' : 'Error';
  let references = 0;
  for (let i = 0; i < REFERRERS; i++) {
    const ns = `team-${i % NAMESPACES}`;
    const kind = REFERRER_KINDS[i % REFERRER_KINDS.length]!;
    const key = `${kind}/${ns}/workload-${i}`;
    // 1,000,000 references over 300,000 referrers: three each, and a fourth for every third referrer.
    const count = i % 3 === 0 && references + 4 <= REFERENCES ? 4 : 3;
    const s = state(i);
    // Half the unresolved ones have been so for an hour: stuck.
    const since = s !== 'Resolved' && i % 2 === 0 ? now - 3_600_000 : now - 1_000;
    const referrer: ReferrerEntity = {
      id: `rules|${key}`,
      key,
      controller: 'rules',
      kind,
      namespace: ns,
      state: s,
      since,
      references: count,
      reconciles: 1,
    };
    if (s !== 'Resolved') referrer.reason = `Secret/${ns}/missing-${i}`;
    log.put('referrer', referrer.id, referrer);
    for (let r = 0; r < count; r++) {
      const referentKind = REFERENT_KINDS[r]!;
      const referentKey = `${referentKind}/${ns}/shared-${(i + r) % 50}`;
      const ref: ReferenceEntity = {
        id: `rules|${key}|${referentKey}|spec.ref${r}`,
        controller: 'rules',
        referrer: key,
        referent: referentKey,
        fieldPath: `spec.ref${r}`,
        count: 1,
        kind: referentKind,
        namespace: ns,
      };
      log.put('reference', ref.id, ref);
      references++;
      if (log.get('referent', referentKey) === undefined) {
        const referent: ReferentEntity = {
          id: referentKey,
          key: referentKey,
          kind: referentKind,
          namespace: ns,
          state: 'Ready',
          referencedBy: 1,
          changedAt: now,
        };
        log.put('referent', referentKey, referent);
      }
    }
  }
  if (references !== REFERENCES) throw new Error(`synthesized ${references} references, expected ${REFERENCES}`);
}

/** The part of the runtime the summary route and the overview stream read. */
function runtimeOf(log: ChangeLog, summary: ReferrerSummary, feed: SummaryFeed): Runtime {
  const cluster = {
    mode: 'embedded' as const,
    server: 'https://127.0.0.1:6443',
    reachable: true,
    version: 'synthetic',
  };
  return {
    changelog: log,
    summary,
    summaryFeed: feed,
    config: { stuckThresholdMs: STUCK_THRESHOLD_MS },
    cluster: () => cluster,
    onCluster: () => () => {},
    metrics: { sseClients: { inc() {}, dec() {} } },
  } as unknown as Runtime;
}

/** overviewStreamBody reads what the real overview stream sends first (the summary), then stops it. */
async function overviewStreamBody(rt: Runtime, url: string): Promise<string> {
  const abort = new AbortController();
  const res = getStream(rt, new Request(url, { signal: abort.signal }));
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!/event: summary\ndata: .*\n\n/.test(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  abort.abort();
  await reader.cancel();
  return text;
}

async function main(): Promise<void> {
  const now = Date.now();
  const log = new ChangeLog();
  const summary = new ReferrerSummary(log, { stuckThresholdMs: STUCK_THRESHOLD_MS });
  const feed = new SummaryFeed(summary);
  const fillStart = performance.now();
  fill(log, now);
  const fillMs = performance.now() - fillStart;
  const rt = runtimeOf(log, summary, feed);
  const t0 = performance.now();
  const summaryText = await getSummary(rt, new Request('http://127.0.0.1/api/v1/summary')).text();
  const summaryMs = performance.now() - t0;
  const totals = (JSON.parse(summaryText) as { totals: { referrers: number; references: number; stuck: number } })
    .totals;
  if (totals.referrers !== REFERRERS || totals.references !== REFERENCES)
    throw new Error(`the summary counts ${totals.referrers} referrers and ${totals.references} references`);
  console.log(
    `synthetic registry: ${REFERRERS} referrers, ${REFERENCES} references, ${log.size('referent')} referents in ${NAMESPACES} namespaces; ${totals.stuck} stuck`,
  );
  console.log(
    `stored in ${fillMs.toFixed(0)} ms with the summary following; GET /api/v1/summary built in ${summaryMs.toFixed(1)} ms, ${summaryText.length} bytes`,
  );

  const server = await startServer(3191);
  const browser = await chromium.launch({
    executablePath: process.env.REFWATCH_CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    const renders: number[] = [];
    const transfers: number[] = [];
    const apiTransfers: number[] = [];
    for (let i = 0; i < LOADS; i++) {
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      // Every byte the page takes over the network, its own code included: what a user on a cluster would download.
      let bytes = 0;
      let apiBytes = 0;
      const urls = new Map<string, string>();
      cdp.on('Network.requestWillBeSent', (e) => urls.set(e.requestId, e.request.url));
      cdp.on('Network.loadingFinished', (e) => {
        bytes += e.encodedDataLength;
        if ((urls.get(e.requestId) ?? '').includes('/api/')) apiBytes += e.encodedDataLength;
      });
      const unexpected: string[] = [];
      await page.route('**/api/v1/**', async (route) => {
        const url = new URL(route.request().url());
        if (url.pathname === '/api/v1/summary') {
          const res = getSummary(rt, new Request(url));
          return route.fulfill({
            status: res.status,
            headers: Object.fromEntries(res.headers),
            body: await res.text(),
          });
        }
        if (url.pathname === '/api/v1/stream' && url.searchParams.get('overview') === '1') {
          const body = await overviewStreamBody(rt, url.href);
          return route.fulfill({
            status: 200,
            headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' },
            body: `retry: 3600000\n\n${body}`,
          });
        }
        // The overview must not load a snapshot (or anything else) of a registry this size.
        unexpected.push(`${url.pathname}${url.search}`);
        return route.fulfill({
          status: 404,
          json: { error: { code: 'NotFound', message: 'not part of the overview' } },
        });
      });
      await page.goto(`${server.url}/`, { waitUntil: 'domcontentloaded' });
      const render = await waitFor(
        OVERVIEW_RENDER,
        60_000,
        async () =>
          (
            await page.evaluate(
              (n) => performance.getEntriesByName(n, 'measure').map((e) => e.duration),
              OVERVIEW_RENDER,
            )
          )[0],
      );
      await page.waitForLoadState('networkidle').catch(() => undefined);
      // Where the time went: the page's own code, then the summary's round trip, then drawing.
      const phases = await page.evaluate(() => {
        const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
        const summary = performance.getEntriesByType('resource').find((e) => e.name.includes('/api/v1/summary')) as
          PerformanceResourceTiming | undefined;
        return {
          domContentLoaded: nav?.domContentLoadedEventEnd ?? NaN,
          summaryStart: summary?.startTime ?? NaN,
          summaryEnd: summary?.responseEnd ?? NaN,
        };
      });
      const rows = await page
        .getByTestId('overview')
        .getByRole('region', { name: 'Namespaces' })
        .getByRole('row')
        .count();
      if (rows < 2) throw new Error('the overview drew no namespace rows');
      if (unexpected.length > 0) throw new Error(`the overview requested ${unexpected.join(', ')}`);
      renders.push(render);
      transfers.push(bytes);
      apiTransfers.push(apiBytes);
      console.log(
        `load ${i + 1}: overview drawn ${render.toFixed(0)} ms after navigation (DOM ready ${phases.domContentLoaded.toFixed(0)} ms, summary asked at ${phases.summaryStart.toFixed(0)} ms, in hand at ${phases.summaryEnd.toFixed(0)} ms); ` +
          `${(bytes / 1024).toFixed(0)} KiB transferred, ${(apiBytes / 1024).toFixed(0)} KiB of it from the API`,
      );
      await context.close();
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    report('ui.overview.referrers', REFERRERS, 'referrers');
    report('ui.overview.references', REFERENCES, 'references');
    report('ui.overview.apiBytes', median(apiTransfers), 'bytes');
    result('ui.overview.firstRender', Math.round(median(renders)), 'ms', '<=', 2000);
    result('ui.overview.transferBytes', median(transfers), 'bytes', '<=', 2 * 1024 * 1024);
  } finally {
    await browser.close();
    await server.stop();
    feed.stop();
    summary.stop();
  }
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
