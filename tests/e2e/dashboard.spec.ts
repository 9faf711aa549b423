import { expect, test } from '@playwright/test';
import {
  SCREENS,
  StreamRelay,
  deleteAllRuns,
  graphNodeCount,
  objectRow,
  openDashboard,
  settle,
  startRun,
} from './dashboard';

// These run against the real server and its embedded cluster; each test makes its data with a demo run and deletes it.
test.afterEach(async ({ request }) => {
  await deleteAllRuns(request);
});

test('loads on the embedded cluster and draws the objects of a run in the graph and the table', async ({
  page,
  request,
}) => {
  const run = await startRun(request, {
    apps: 4,
    databases: 1,
    caches: 1,
    secrets: 1,
    readyAfter: { distribution: 'fixed', ms: 30_000 },
    dangling: { typo: 0.25 },
    timeoutMs: 60_000,
  });
  // Scoped to the run's namespace: the example's objects share the (virtualized) table.
  await openDashboard(page, `?ns=${run.namespace}`, 'light');
  await expect(page.getByText('embedded', { exact: false }).first()).toBeVisible();
  for (const name of ['shop-0', 'shop-1', 'shop-2', 'shop-3', 'orders-0', 'sessions-0', 'credentials-0']) {
    await expect(objectRow(page, name, run.namespace)).toHaveCount(1);
  }
  // The graph and its accessible table show the same nodes.
  const tableCount = page.locator('#objects header span').first();
  await expect.poll(() => graphNodeCount(page)).toBeGreaterThanOrEqual(7);
  const nodes = await graphNodeCount(page);
  await expect(tableCount).toContainText(`${nodes} nodes`);
  // Unresolved: its Database turns Ready after 30 s, so past the 2 s stuck threshold it is rightly Stuck.
  await expect(objectRow(page, 'shop-0', run.namespace)).toHaveAttribute('aria-label', /Waiting|Not found|Stuck/);
  await settle(page);
  await page.screenshot({ path: `${SCREENS}/dashboard-light.png` });

  await page.getByRole('button', { name: /theme/i }).click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await settle(page, 600);
  await page.screenshot({ path: `${SCREENS}/dashboard-dark.png` });
});

test('clicking a stuck referrer shows why it is stuck and how to fix it', async ({ page, request }) => {
  const run = await startRun(request, {
    apps: 4,
    databases: 1,
    caches: 1,
    secrets: 1,
    readyAfter: { distribution: 'fixed', ms: 40_000 },
    dangling: { typo: 0.25 },
    timeoutMs: 60_000,
  });
  // The e2e server calls a referrer stuck after 2 s (REFWATCH_STUCK_THRESHOLD); the snapshot then lists it with its diagnosis.
  await page.waitForTimeout(3000);
  await openDashboard(page, '', 'light');
  const stuck = page.getByRole('list', { name: /Stuck references/ });
  // The panel draws its first lines only; the server's other stuck referrers may come before this run's.
  const more = page.getByTestId('stuck-show-more');
  while (await more.isVisible()) await more.click();
  const entry = stuck.getByRole('listitem').filter({ hasText: run.namespace }).filter({ hasText: 'NotFound' });
  await expect(entry).toHaveCount(1);
  await expect(entry).toContainText('ordrs-0');
  await entry.getByRole('button').first().click();
  await expect(page).toHaveURL(/select=App\.demo\.refwatch\.dev%2Frefwatch-demo-/);
  const inspector = page.getByTestId('inspector');
  await expect(inspector).toContainText('ordrs-0');
  await expect(inspector).toContainText('Fix');
  await expect(inspector).toContainText('orders-0'); // the name it most likely meant
  await settle(page, 800);
  await page.screenshot({ path: `${SCREENS}/stuck-selected.png` });
  await page.keyboard.press('Escape');
  await expect(inspector).toHaveCount(0);
  await expect(page).not.toHaveURL(/select=/);
});

test('a referent turning Ready changes its referrer live, without a reload', async ({ page, request }) => {
  const run = await startRun(request, {
    apps: 3,
    databases: 1,
    caches: 1,
    secrets: 1,
    readyAfter: { distribution: 'fixed', ms: 6_000 },
    timeoutMs: 60_000,
  });
  // The run's namespace only: the object table renders the rows in view, and the cluster's other referrers
  // (CustomResourceDefinitions, the example) would push the run's out of it.
  await openDashboard(page, `?ns=${run.namespace}`, 'light');
  await page.evaluate(() => ((window as unknown as { __loaded: number }).__loaded = 1));
  const app = objectRow(page, 'shop-0', run.namespace);
  const database = objectRow(page, 'orders-0', run.namespace);
  // Not yet resolved: Waiting, or already Stuck past the e2e server's 2 s threshold on a slow machine.
  await expect(app).toHaveAttribute('aria-label', /Waiting|Stuck/);
  await expect(database).toHaveAttribute('aria-label', /Waiting|Stuck/);
  await page.screenshot({ path: `${SCREENS}/live-before.png` });
  // Database orders-0 and Cache sessions-0 turn Ready 6 s after they were made; the watch resolves the Apps at once.
  await expect(database).toHaveAttribute('aria-label', /Resolved/, { timeout: 20_000 });
  await expect(app).toHaveAttribute('aria-label', /Resolved/, { timeout: 5_000 });
  await page.screenshot({ path: `${SCREENS}/live-after.png` });
  expect(await page.evaluate(() => (window as unknown as { __loaded?: number }).__loaded)).toBe(1);
});

test('dropping every reference to a kind shows its controller cancelled', async ({ page, request }) => {
  // The page is open before the run starts: the Cache controller is Active for only the 4 s before the churn,
  // which a page still loading on a busy machine could miss.
  await openDashboard(page, '?tab=controllers', 'light');
  await startRun(request, {
    apps: 3,
    databases: 1,
    caches: 1,
    secrets: 1,
    readyAfter: { distribution: 'fixed', ms: 40_000 },
    churn: { dropKind: 'Cache', afterMs: 4_000 },
    timeoutMs: 60_000,
  });
  const controllers = page.getByRole('list', { name: 'Reference controllers' });
  const item = (kind: string) =>
    controllers.getByRole('listitem').filter({ has: page.getByRole('button', { name: new RegExp(`^${kind}\\b`) }) });
  await expect(item('Cache')).toHaveAttribute('data-state', 'Active');
  // Churn drops every cacheRef; after the grace period (2 s on the e2e server) the Cache watch is cancelled.
  await expect(item('Cache')).toHaveAttribute('data-state', 'Cancelled', { timeout: 20_000 });
  await expect(item('Cache')).toContainText('Cancelled');
  await expect(item('Database')).toHaveAttribute('data-state', 'Active');
  await item('Cache').locator('details summary').click();
  await settle(page, 600);
  await page.screenshot({ path: `${SCREENS}/controller-cancelled.png` });
});

test('when the server drops the stream, the page reconnects and catches up without a reload', async ({
  page,
  request,
  baseURL,
}) => {
  const relay = new StreamRelay(baseURL!);
  const relayUrl = await relay.start();
  try {
    await relay.route(page, relayUrl);
    await deleteAllRuns(request);
    await openDashboard(page, '', 'light');
    await page.evaluate(() => ((window as unknown as { __loaded: number }).__loaded = 1));
    const indicator = page.locator('[data-conn]');

    relay.drop();
    await expect(indicator).toHaveAttribute('data-conn', 'reconnecting');
    await expect(indicator).toContainText('Reconnecting');
    await page.screenshot({ path: `${SCREENS}/stream-reconnecting.png` });
    // Changes made while the page is cut off: a whole run of objects.
    const run = await startRun(request, {
      apps: 3,
      databases: 1,
      caches: 1,
      secrets: 1,
      readyAfter: { distribution: 'fixed', ms: 30_000 },
      timeoutMs: 60_000,
    });
    await page.waitForTimeout(1500);
    await expect(objectRow(page, 'shop-0', run.namespace)).toHaveCount(0);

    relay.restore();
    await expect(indicator).toHaveAttribute('data-conn', 'live', { timeout: 15_000 });
    await expect(objectRow(page, 'shop-0', run.namespace)).toHaveCount(1);
    const server = (await (await request.get('/api/v1/snapshot')).json()) as { revision: number };
    await expect
      .poll(async () => Number(((await indicator.textContent()) ?? '').replace(/[^0-9]/g, '')), {
        message: 'the page reaches the server revision',
      })
      .toBeGreaterThanOrEqual(server.revision);
    expect(relay.connections).toBeGreaterThanOrEqual(2);
    expect(await page.evaluate(() => (window as unknown as { __loaded?: number }).__loaded)).toBe(1);
    await settle(page);
    await page.screenshot({ path: `${SCREENS}/stream-resumed.png` });
  } finally {
    await relay.stop();
  }
});

test('the objects table is reachable by keyboard: arrows move, Enter selects', async ({ page, request }) => {
  await startRun(request, {
    apps: 3,
    databases: 1,
    caches: 1,
    secrets: 1,
    readyAfter: { distribution: 'fixed', ms: 30_000 },
    timeoutMs: 60_000,
  });
  await openDashboard(page, '', 'dark');
  const rows = page.locator('#objects tbody tr');
  await expect(rows.nth(1)).toBeVisible();
  await rows.first().focus();
  await page.keyboard.press('ArrowDown');
  await expect(rows.nth(1)).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('inspector')).toBeVisible();
  await expect(page).toHaveURL(/select=/);
});
