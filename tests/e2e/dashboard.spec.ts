import { expect, test } from '@playwright/test';
import { openDashboard, stubExplain } from './dashboard';

test('shows the reference graph and the stuck references in light theme', async ({ page }) => {
  await openDashboard(page, '', 'light');
  await expect(page.getByRole('tab', { name: /Stuck/ })).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByRole('list', { name: /Stuck references/ }).getByRole('listitem').first()).toContainText('payments');
  await page.screenshot({ path: 'test-results/screens/dashboard-light.png' });
});

test('shows the same dashboard in dark theme', async ({ page }) => {
  await openDashboard(page, '', 'dark');
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await page.screenshot({ path: 'test-results/screens/dashboard-dark.png' });
});

test('selecting a stuck referrer explains why, and Escape closes the panel', async ({ page }) => {
  await stubExplain(page);
  await openDashboard(page, '', 'light');
  await page.getByRole('list', { name: /Stuck references/ }).getByRole('button', { name: /catalog/ }).click();
  await expect(page).toHaveURL(/select=App\.demo\.refwatch\.dev%2Fshop%2Fcatalog/);
  const inspector = page.getByTestId('inspector');
  await expect(inspector).toContainText('catalog');
  await expect(inspector).toContainText('Fix the typo');
  await expect(inspector).toContainText('Did you mean');
  await page.waitForTimeout(600);
  await page.screenshot({ path: 'test-results/screens/dashboard-selected.png' });
  await page.keyboard.press('Escape');
  await expect(inspector).toHaveCount(0);
  await expect(page).not.toHaveURL(/select=/);
});

test('a shared link restores filters and selection', async ({ page }) => {
  await openDashboard(page, '?ns=billing&state=stuck&select=App.demo.refwatch.dev%2Fbilling%2Fpayments', 'dark');
  await expect(page.getByLabel('Search objects')).toHaveValue('');
  await expect(page.getByRole('combobox', { name: 'Namespace' })).toHaveValue('billing');
  await expect(page.getByTestId('inspector')).toContainText('payments');
  await page.waitForTimeout(600);
  await page.screenshot({ path: 'test-results/screens/dashboard-filtered-dark.png' });
});

test('the objects table is reachable by keyboard: arrows move, Enter selects', async ({ page }) => {
  await openDashboard(page, '', 'light');
  const rows = page.locator('#objects tbody tr');
  await rows.first().focus();
  await page.keyboard.press('ArrowDown');
  await expect(rows.nth(1)).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('inspector')).toBeVisible();
  await expect(page).toHaveURL(/select=/);
});
