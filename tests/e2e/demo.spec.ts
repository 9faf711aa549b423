import { expect, test } from '@playwright/test';
import { SCREENS, deleteAllRuns, openDashboard, settle } from './dashboard';
import type { Snapshot } from '../../lib/changelog/wire';

test.afterEach(async ({ request }) => {
  await deleteAllRuns(request);
});

test('the demo form shows the API validation error next to the field', async ({ page, request }) => {
  await deleteAllRuns(request);
  await openDashboard(page, '?tab=demo', 'light');
  const panel = page.getByTestId('demo-panel');
  const apps = panel.getByLabel('Apps', { exact: true });
  await apps.fill('0');
  await panel.getByRole('button', { name: 'Start run' }).click();
  await expect(apps).toHaveAttribute('aria-invalid', 'true');
  await expect(apps).toHaveAccessibleDescription(/must be at least 1/);
  await panel.getByLabel('Apps', { exact: true }).fill('10');
  await panel.getByLabel('Timeout (s)').fill('0.5');
  await panel.getByRole('button', { name: 'Start run' }).click();
  await expect(panel.getByLabel('Timeout (s)')).toHaveAccessibleDescription(/must be at least 1 s/);
  await expect(apps).not.toHaveAttribute('aria-invalid', 'true');
  await page.screenshot({ path: `${SCREENS}/demo-validation.png` });
  expect(((await (await request.get('/api/v1/demo/runs')).json()) as { items: unknown[] }).items).toHaveLength(0);
});

test('a run started from the panel plots both modes, shows watch faster, its stuck references and the churned kind cancelled', async ({
  page,
  request,
}) => {
  test.setTimeout(180_000);
  await deleteAllRuns(request);
  await openDashboard(page, '?tab=demo', 'light');
  const panel = page.getByTestId('demo-panel');
  await panel.getByLabel('Apps', { exact: true }).fill('20');
  await panel.getByLabel('Min (s)').fill('1');
  // Readiness spread over 45 s keeps the run going past the dashboard's 30 s stuck threshold.
  await panel.getByLabel('Max (s)').fill('45');
  await panel.getByLabel('Typo').fill('0.1');
  await panel.getByLabel('Wrong namespace').fill('0');
  await panel.getByLabel('Kind not installed').fill('0');
  await panel.getByLabel(/Churn/).check();
  await panel.getByLabel('after (s)').fill('3');
  await panel.getByLabel('Timeout (s)').fill('90');
  await panel.getByRole('button', { name: 'Start run' }).click();

  const run = page.getByTestId('demo-run');
  await expect(run).toHaveAttribute('data-phase', /Creating|Running/);
  const id = ((await run.locator('h3 .mono').textContent()) ?? '').trim();
  expect(id).toMatch(/^[0-9a-f]{6}$/);

  // The CDF fills for both modes, and the table shows watch well ahead of backoff. It counts the Apps plotted, not
  // the curve's points: the watch mode often resolves every App within the same millisecond or two, one step each.
  const chart = page.getByTestId('demo-chart');
  await expect
    .poll(async () => Number(await chart.getAttribute('data-watch-apps')), { timeout: 40_000 })
    .toBeGreaterThan(2);
  await expect
    .poll(async () => Number(await chart.getAttribute('data-backoff-apps')), { timeout: 40_000 })
    .toBeGreaterThan(2);
  await expect(chart).toHaveAttribute('data-watch-points', /^[1-9]\d*$/);
  await expect(chart).toHaveAttribute('data-backoff-points', /^[1-9]\d*$/);
  const p50 = (mode: string) =>
    page.getByTestId('demo-summary').locator(`tr[data-metric="p50"] td[data-mode="${mode}"]`);
  // Apps released by the churn patch count from the patch in both modes; the gap opens as the remaining referents turn Ready.
  await expect
    .poll(
      async () => {
        const watchMs = Number(await p50('watch').getAttribute('data-ms'));
        const backoffMs = Number(await p50('backoff').getAttribute('data-ms'));
        return backoffMs > 0 && watchMs * 2 < backoffMs;
      },
      { timeout: 45_000, message: 'watch p50 well below backoff p50' },
    )
    .toBe(true);
  await expect(page.getByTestId('demo-summary').locator('tr[data-metric="p50"] td').last()).toContainText('×');
  await expect(panel.getByRole('link', { name: 'CSV' })).toHaveAttribute('href', `/api/v1/demo/runs/${id}?format=csv`);
  const csv = await request.get(`/api/v1/demo/runs/${id}?format=csv`);
  expect((await csv.text()).split('\r\n')[0]).toContain('watchLatencyMs');
  await settle(page, 500);
  await page.screenshot({ path: `${SCREENS}/demo-running-light.png` });
  await page.getByTestId('demo-summary').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SCREENS}/demo-summary-light.png` });

  // Churn dropped every cacheRef 3 s in; after the grace period the Cache controller is cancelled.
  await page.getByRole('tab', { name: /Controllers/ }).click();
  const cache = page
    .getByRole('list', { name: 'Reference controllers' })
    .getByRole('listitem')
    .filter({ has: page.getByRole('button', { name: /^Cache\b/ }) });
  await expect(cache).toHaveAttribute('data-state', 'Cancelled', { timeout: 20_000 });
  await page.screenshot({ path: `${SCREENS}/demo-controllers.png` });

  // The dangling references (typos) show in the Stuck panel once past the dashboard's stuck threshold.
  await page.getByRole('tab', { name: /Stuck/ }).click();
  const entry = page
    .getByRole('list', { name: /Stuck references/ })
    .getByRole('listitem')
    .filter({ hasText: `refwatch-demo-${id}` })
    .filter({ hasText: 'ordrs-' });
  await expect(entry.first()).toBeVisible({ timeout: 45_000 });
  await page.screenshot({ path: `${SCREENS}/demo-stuck.png` });

  await page.getByRole('tab', { name: /Demo/ }).click();
  await page.getByRole('button', { name: /Switch to dark theme/ }).click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await settle(page, 800);
  await page.screenshot({ path: `${SCREENS}/demo-dark.png` });

  // Stop keeps the run: its objects, its figures and exports, and its graph on the dashboard.
  const runs = async () =>
    ((await (await request.get('/api/v1/demo/runs')).json()) as { items: { id: string; phase: string }[] }).items;
  const referrers = async () =>
    ((await (await request.get(`/api/v1/snapshot?namespace=refwatch-demo-${id}`)).json()) as Snapshot).referrers.filter(
      (r) => r.controller === `demo/watch/${id}`,
    ).length;
  await panel.getByRole('button', { name: 'Stop' }).click();
  await expect(run).toHaveAttribute('data-phase', 'Stopped');
  await expect(panel.getByRole('button', { name: 'Stop' })).toHaveCount(0);
  await expect(panel.getByRole('link', { name: 'CSV' })).toHaveAttribute('href', `/api/v1/demo/runs/${id}?format=csv`);
  await expect(panel.getByRole('link', { name: 'JSON' })).toHaveAttribute(
    'href',
    `/api/v1/demo/runs/${id}?format=json`,
  );
  expect((await (await request.get(`/api/v1/demo/runs/${id}?format=csv`)).text()).trim().split('\r\n')).toHaveLength(
    21,
  );
  expect(await runs()).toEqual([expect.objectContaining({ id, phase: 'Stopped' })]);
  expect(await referrers()).toBe(20);
  await page.getByRole('tab', { name: /Controllers/ }).click();
  await expect(cache).toHaveAttribute('data-state', 'Cancelled');
  await page.getByRole('tab', { name: /Demo/ }).click();
  await settle(page, 500);
  await page.screenshot({ path: `${SCREENS}/demo-stopped.png` });

  // Delete removes the run with its objects and its graph.
  await panel.getByRole('button', { name: 'Delete run' }).click();
  await expect(run).toHaveCount(0);
  await expect.poll(async () => (await runs()).length).toBe(0);
  expect(await referrers()).toBe(0);
  expect((await request.get(`/api/v1/demo/runs/${id}`)).status()).toBe(404);
});
