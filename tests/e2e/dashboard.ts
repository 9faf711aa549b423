import { expect, type Page } from '@playwright/test';

/** openDashboard loads the dashboard (optionally with a query) and waits until the graph has drawn. */
export async function openDashboard(page: Page, query = '', theme?: 'light' | 'dark'): Promise<void> {
  if (theme) {
    await page.emulateMedia({ colorScheme: theme });
    await page.addInitScript((t) => localStorage.setItem('refwatch.theme', t), theme);
  }
  await page.goto(`/${query}`);
  await expect(page.getByTestId('graph-canvas')).toBeVisible();
  // The canvas paints after the first layout; the objects table fills from the same model.
  await expect(page.locator('#objects tbody tr').first()).toBeVisible();
  await page.waitForTimeout(1200);
}

/** stubExplain answers /api/v1/explain in the page, so the inspector can be checked against fixture servers. */
export async function stubExplain(page: Page): Promise<void> {
  await page.route('**/api/v1/explain?*', async (route) => {
    const object = new URL(route.request().url()).searchParams.get('object') ?? '';
    await route.fulfill({
      json: {
        object,
        controllers: [
          {
            controller: 'app-watch',
            state: 'NotFound',
            since: Date.now() - 190_000,
            references: [
              {
                referent: 'Database.demo.refwatch.dev/shop/ordrs',
                fieldPath: 'spec.databaseRef',
                state: 'NotFound',
                reason: 'NotFound',
                message: 'Database.demo.refwatch.dev/shop/ordrs not found',
                fix: 'Fix the typo in spec.databaseRef: orders.',
                suggestions: ['Database.demo.refwatch.dev/shop/orders'],
              },
            ],
          },
        ],
      },
    });
  });
}
