import { expect, test } from '@playwright/test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KubeClient } from '../../lib/kube';
import { embeddedKubeconfigPath } from '../../server/kubeconfig-file';
import { objectRow, settle } from './dashboard';
import { startServer } from './server';

/*
 * A selector reference on the graph, on a server of its own: Service web selects 24 Pods, the graph draws 20 of
 * them and one "+4 more" node, which shows the worst state of the Pods it stands for (one is not Ready).
 * The picture goes to docs/images for docs/rules.md.
 */

const NAMESPACE = 'selector-e2e';
const PODS = 24;
const IMAGES = 'docs/images';

test('a Service selecting 24 Pods draws 20 dotted edges and a "+4 more" node in the worst hidden state', async ({
  page,
}) => {
  test.setTimeout(300_000);
  // Tall enough that the fitted graph (a column of 20 Pods) stays readable in the picture.
  await page.setViewportSize({ width: 1440, height: 1800 });
  const state = mkdtempSync(path.join(tmpdir(), 'refwatch-e2e-selector-'));
  const server = await startServer({ XDG_STATE_HOME: state, REFWATCH_EXAMPLE: 'none', REFWATCH_DEMO: 'off' });
  try {
    const client = KubeClient.fromFile(embeddedKubeconfigPath({ XDG_STATE_HOME: state }));
    try {
      await client.request('POST', '/api/v1/namespaces', {
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } },
      });
      for (let i = 0; i < PODS; i++) {
        const name = `web-${String(i).padStart(2, '0')}`;
        await client.request('POST', `/api/v1/namespaces/${NAMESPACE}/pods`, {
          body: {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name, labels: { app: 'web' } },
            spec: { automountServiceAccountToken: false, containers: [{ name: 'web', image: 'example/web:1' }] },
          },
        });
        // The last Pod, past the twentieth edge, is not Ready: the "+4 more" node must say so.
        await client.request('PATCH', `/api/v1/namespaces/${NAMESPACE}/pods/${name}/status`, {
          body: { status: { conditions: [{ type: 'Ready', status: i === PODS - 1 ? 'False' : 'True' }] } },
          contentType: 'application/merge-patch+json',
        });
      }
      await client.request('POST', `/api/v1/namespaces/${NAMESPACE}/services`, {
        body: {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'web' },
          spec: { selector: { app: 'web' }, ports: [{ port: 80 }] },
        },
      });
    } finally {
      client.close();
    }

    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(`${server.url}/?ns=${NAMESPACE}&select=${encodeURIComponent(`Service/${NAMESPACE}/web`)}`);
    await expect(page.locator('[data-conn]')).toHaveAttribute('data-conn', 'live', { timeout: 60_000 });
    await expect(page.getByTestId('inspector')).toContainText('Service/selector-e2e/web', { timeout: 30_000 });
    // Waiting rows sort first in the objects table: the summary of the hidden matches is one of them.
    const more = objectRow(page, '+4 more', NAMESPACE);
    await expect(more).toHaveAccessibleName(/\+4 more, Pod in selector-e2e, Waiting/, { timeout: 30_000 });
    // ELK's answer from the worker sets the opening view again when it lands: zoom out after it, so the whole
    // column of Pods and the "+4 more" node below it are in the picture.
    await settle(page, 6000);
    for (let i = 0; i < 2; i++) await page.getByRole('button', { name: 'Zoom out' }).click();
    await settle(page, 1500);
    await page.screenshot({ path: `${IMAGES}/selector-graph.png` });
  } finally {
    await server.stop();
    rmSync(state, { recursive: true, force: true });
  }
});
