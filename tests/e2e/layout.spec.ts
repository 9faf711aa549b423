import { expect, test } from '@playwright/test';
import { SCREENS, deleteAllRuns, graphNodeCount, openDashboard, settle, startRun } from './dashboard';

test.afterEach(async ({ request }) => {
  await deleteAllRuns(request);
});

test('draws the demo graph with the layered layout in a worker; the toggle switches to force and back', async ({
  page,
  request,
}) => {
  const workers: string[] = [];
  const fallbacks: string[] = [];
  page.on('worker', (w) => workers.push(w.url()));
  page.on('console', (m) => {
    if (m.text().includes('laying out on the page instead')) fallbacks.push(m.text());
  });
  // About 160 nodes: 36 Apps with a Database, a Cache and a Secret each, plus the example's objects and the controllers.
  await startRun(request, {
    apps: 36,
    databases: 36,
    caches: 36,
    secrets: 36,
    readyAfter: { distribution: 'uniform', minMs: 1_000, maxMs: 60_000 },
    dangling: { typo: 0.1 },
    timeoutMs: 120_000,
  });
  await openDashboard(page, '', 'light');
  const canvas = page.getByTestId('graph-canvas');
  await expect(canvas).toHaveAttribute('data-layout', 'layered');
  await expect.poll(() => graphNodeCount(page), { timeout: 20_000 }).toBeGreaterThanOrEqual(150);
  await expect(canvas).toBeVisible();
  // The quick columns are drawn at once; ELK runs in the worker (bundled by Next as its own chunk), not in the page's fallback.
  await expect.poll(() => workers.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
  await settle(page, 3000);
  expect(fallbacks).toEqual([]);
  expect(await page.evaluate(() => performance.getEntriesByName('refwatch:graph:first-render', 'measure').length)).toBe(
    1,
  );
  await page.screenshot({ path: `${SCREENS}/layered-demo.png` });

  const layout = page.getByRole('combobox', { name: 'Layout' });
  await layout.selectOption('force');
  await expect(page).toHaveURL(/layout=force/);
  await expect(canvas).toHaveAttribute('data-layout', 'force');
  // The choice is part of the view: a reload keeps it.
  await page.reload();
  await expect(page.getByTestId('graph-canvas')).toHaveAttribute('data-layout', 'force');
  await expect(page.getByRole('combobox', { name: 'Layout' })).toHaveValue('force');
  await page.getByRole('combobox', { name: 'Layout' }).selectOption('layered');
  await expect(page).not.toHaveURL(/layout=/);
  await expect(page.getByTestId('graph-canvas')).toHaveAttribute('data-layout', 'layered');
});
