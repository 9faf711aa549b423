import { expect, test } from '@playwright/test';
import { KubeClient } from '../../lib/kube';
import { embeddedKubeconfigPath } from '../../server/kubeconfig-file';
import { deleteAllRuns, openDashboard, settle, stuckEntry } from './dashboard';

/*
 * The details of a stuck object, on the example npm start loads: its kubectl
 * fix, its core Events and its YAML, read from the server the page talks to.
 */
test.use({ viewport: { width: 1440, height: 900 } });

const NAMESPACE = 'refwatch-example';

/**
 * postFailedMount records the Event a kubelet would for the Pod's missing
 * Secret (the embedded cluster runs no kubelet), through the kubeconfig npm
 * start writes for kubectl.
 */
async function postFailedMount(): Promise<void> {
  const client = KubeClient.fromFile(embeddedKubeconfigPath());
  try {
    const now = new Date().toISOString();
    await client.request('POST', `/api/v1/namespaces/${NAMESPACE}/events`, {
      body: {
        metadata: { generateName: 'worker.' },
        involvedObject: { apiVersion: 'v1', kind: 'Pod', name: 'worker', namespace: NAMESPACE },
        reason: 'FailedMount',
        message: 'MountVolume.SetUp failed for volume "credentials" : secret "db-pasword" not found',
        type: 'Warning',
        count: 4,
        firstTimestamp: now,
        lastTimestamp: now,
        source: { component: 'kubelet' },
      },
    });
  } finally {
    client.close();
  }
}

test("a stuck Pod's details show its kubectl fix, its Events and its YAML", async ({ page, request, context }) => {
  await deleteAllRuns(request);
  await postFailedMount();
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await openDashboard(page, `?ns=${NAMESPACE}`, 'light');
  await stuckEntry(page, NAMESPACE, 'worker').getByRole('button').first().click();
  const inspector = page.getByTestId('inspector');
  const details = inspector.getByTestId('object-details');
  await expect(details).toBeVisible();

  const command = `kubectl -n ${NAMESPACE} create secret generic db-pasword --from-literal=KEY=VALUE`;
  await expect(details.getByTestId('details-fix')).toContainText(command);
  await expect(details.getByTestId('details-events')).toContainText('FailedMount');
  await expect(details.getByTestId('details-events')).toContainText('secret "db-pasword" not found');
  await expect(details.getByTestId('details-history')).toContainText(/NotFound|Waiting/);
  await expect(details.getByTestId('details-yaml')).toContainText('kind: Pod');
  await expect(details.getByTestId('details-yaml')).toContainText('secretName: db-pasword');
  await expect(details.getByTestId('details-yaml')).not.toContainText('managedFields');

  // The picture: the whole inspector, in a window tall enough to hold the details.
  await page.setViewportSize({ width: 1440, height: 2000 });
  await settle(page, 1000);
  const panel = (await inspector.boundingBox())!;
  const end = (await details.boundingBox())!;
  await page.screenshot({
    path: 'docs/images/details.png',
    clip: { x: panel.x, y: panel.y, width: panel.width, height: end.y + end.height + 16 - panel.y },
  });

  await details.getByRole('button', { name: `Copy command ${command}` }).click();
  await expect(details.getByRole('button', { name: `Copy command ${command}` })).toHaveText('Copied');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(command);
});

test("a missing Secret's details say how to create it, and show no YAML", async ({ page, request }) => {
  await deleteAllRuns(request);
  await openDashboard(page, `?ns=${NAMESPACE}&select=${encodeURIComponent(`Secret/${NAMESPACE}/db-pasword`)}`, 'light');
  const details = page.getByTestId('inspector').getByTestId('object-details');
  await expect(details.getByTestId('details-fix')).toContainText(
    `kubectl -n ${NAMESPACE} create secret generic db-pasword`,
  );
  await expect(details).toContainText('The cluster has no such object.');
});
