import { expect, test, type Page } from '@playwright/test';
import { decodeDelta, decodeSnapshot } from '../../lib/changelog/codec';
import { SCREENS, deleteAllRuns, graphNodeCount, objectRow, openDashboard, settle, startRun } from './dashboard';

/*
 * The overview and scoped loading, on the real server. Its registry is small
 * (the example, a demo run), so it opens on the whole graph; `view=overview`
 * and `view=scope` ask for the large-registry flow by name.
 */
test.afterEach(async ({ request }) => {
  await deleteAllRuns(request);
});

const EXAMPLE = 'refwatch-example';

/** recordStream keeps every SSE message the page's EventSource receives, and the URLs it opened. */
async function recordStream(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = window as unknown as { __sse: { url: string; event: string; data: string }[] };
    w.__sse = [];
    const Native = window.EventSource;
    window.EventSource = class extends Native {
      constructor(url: string | URL, init?: EventSourceInit) {
        super(url, init);
        for (const event of ['snapshot', 'delta', 'summary', 'resync']) {
          this.addEventListener(event, (ev) =>
            w.__sse.push({ url: String(url), event, data: String((ev as MessageEvent).data) }),
          );
        }
      }
    } as typeof EventSource;
  });
}

type Entity = { key?: string; referrer?: string; referent?: string };

/** The object keys a snapshot or delta carries (referrers, referents, references, events), decoded from the wire format; the cluster-wide controllers and watches are context. */
function objectKeys(m: { event: string; data: string }): string[] {
  const keysOf = (e: Entity) => [e.key, e.referrer, e.referent].filter((k): k is string => k !== undefined);
  if (m.event === 'delta') {
    return decodeDelta(JSON.parse(m.data))
      .changes.filter((c) => ['referrer', 'referent', 'reference', 'event'].includes(c.entity))
      .flatMap((c) => (c.removed ? [c.id] : keysOf(c.value as Entity)));
  }
  const s = decodeSnapshot(JSON.parse(m.data));
  return [...s.referrers, ...s.referents, ...s.references, ...s.events].flatMap((e) => keysOf(e as Entity));
}

const received = (page: Page) =>
  page.evaluate(() => (window as unknown as { __sse: { url: string; event: string; data: string }[] }).__sse);

test('overview → namespace → stuck object, each scope loaded from the server', async ({ page, request }) => {
  await deleteAllRuns(request);
  await recordStream(page);
  await openDashboard(page, '?view=overview', 'light');
  const overview = page.getByTestId('overview');
  await expect(overview).toBeVisible();
  // The example's three stuck referrers (the e2e server calls one stuck after 2 s) put its namespace first.
  const namespaces = overview.getByRole('region', { name: 'Namespaces' });
  const exampleRow = namespaces
    .getByRole('row')
    .filter({ has: page.getByRole('button', { name: EXAMPLE, exact: true }) });
  await expect(exampleRow.getByRole('cell').first()).toHaveText(/^[3-9]$/);
  await expect(namespaces.getByRole('row').nth(1)).toContainText(EXAMPLE);
  await expect(overview.getByRole('complementary', { name: 'Stuck referrers' })).toContainText('worker');
  // No snapshot yet: the overview stream carries the summary alone.
  expect((await received(page)).filter((m) => m.event === 'snapshot')).toEqual([]);
  await settle(page, 500);
  await page.screenshot({ path: `${SCREENS}/overview.png` });

  await exampleRow.getByRole('button', { name: EXAMPLE }).click();
  await expect(page).toHaveURL(new RegExp(`ns=${EXAMPLE}.*view=scope`));
  await expect(page.getByTestId('scope')).toContainText(`namespace ${EXAMPLE}`);
  await expect(objectRow(page, 'worker', EXAMPLE)).toHaveCount(1);
  await expect.poll(() => graphNodeCount(page)).toBeGreaterThan(3);
  const snapshots = (await received(page)).filter((m) => m.event === 'snapshot');
  // The scope is the namespace alone; format=lean is how the dashboard asks for the lean wire format.
  expect(snapshots.map((m) => new URL(m.url, 'http://x').search)).toEqual([`?namespace=${EXAMPLE}&format=lean`]);
  await settle(page, 1500);
  await page.screenshot({ path: `${SCREENS}/scope-namespace.png` });

  const stuck = page
    .getByRole('list', { name: /Stuck references/ })
    .getByRole('listitem')
    .filter({ hasText: 'worker' });
  await stuck.getByRole('button').first().click();
  await expect(page.getByTestId('inspector')).toContainText('db-pasword');

  // Back to the overview, and forward again with the browser's buttons.
  await page.getByRole('button', { name: '← Overview' }).click();
  await expect(overview).toBeVisible();
  await page.goBack();
  await expect(page.getByTestId('inspector')).toBeVisible();
  await page.goBack();
  await expect(page.getByTestId('scope')).toContainText(`namespace ${EXAMPLE}`);
  await expect(page.getByTestId('inspector')).toHaveCount(0);
  await page.goBack();
  await expect(overview).toBeVisible();
});

test('a scoped page receives no change from outside its scope', async ({ page, request }) => {
  const run = await startRun(request, {
    apps: 3,
    databases: 1,
    caches: 1,
    secrets: 1,
    readyAfter: { distribution: 'fixed', ms: 8_000 },
    timeoutMs: 60_000,
  });
  await recordStream(page);
  // A deep link: the run's Caches only. Its Database turns Ready at the same moment as its Cache, outside the scope.
  const kind = 'Cache.demo.refwatch.dev';
  await openDashboard(page, `?ns=${run.namespace}&kind=${kind}&view=scope`, 'light');
  await expect(page.getByTestId('scope')).toContainText(`kind ${kind}`);
  const cache = objectRow(page, 'sessions-0', run.namespace);
  await expect(cache).toHaveAttribute('aria-label', /Waiting|Not ready/i);
  await expect(cache).toHaveAttribute('aria-label', /Resolved|Ready/, { timeout: 30_000 });
  const messages = await received(page);
  const deltas = messages.filter((m) => m.event === 'delta');
  expect(deltas.some((m) => objectKeys(m).includes(`${kind}/${run.namespace}/sessions-0`))).toBe(true);
  // Every object the page got is inside the scope: the run's Cache, or an App's reference to it; no Database, nothing from another namespace.
  const keys = messages.filter((m) => m.event === 'snapshot' || m.event === 'delta').flatMap(objectKeys);
  expect(keys.length).toBeGreaterThan(0);
  const outside = keys.filter(
    (k) =>
      !k.startsWith(`${kind}/${run.namespace}/`) &&
      !k.startsWith(`App.demo.refwatch.dev/${run.namespace}/`) &&
      !k.includes(kind),
  );
  expect(outside).toEqual([]);
  expect(keys.filter((k) => k.startsWith('Database.'))).toEqual([]);
  await expect(objectRow(page, 'orders-0', run.namespace)).toHaveCount(0);
});

test('a deep link to a stuck object opens on it, scoped to it and its references', async ({ page, request }) => {
  await deleteAllRuns(request);
  await recordStream(page);
  await openDashboard(page, `?object=${encodeURIComponent(`Pod/${EXAMPLE}/worker`)}&view=scope`, 'light');
  await expect(page.getByTestId('scope')).toContainText(`object Pod/${EXAMPLE}/worker`);
  await expect(page.getByTestId('inspector')).toContainText('db-pasword');
  const snapshot = (await received(page)).find((m) => m.event === 'snapshot');
  expect(new URL(snapshot!.url, 'http://x').searchParams.get('object')).toBe(`Pod/${EXAMPLE}/worker`);
  // The object, and the referents it names; not the rest of its namespace.
  await expect(objectRow(page, 'worker', EXAMPLE)).toHaveCount(1);
  await expect(objectRow(page, 'shop', EXAMPLE)).toHaveCount(0);
  await settle(page, 1500);
  await page.screenshot({ path: `${SCREENS}/scope-object.png` });
});
