import { defineConfig } from 'vitest/config';
import path from 'node:path';

export default defineConfig({
  resolve: {
    alias: [
      { find: '@', replacement: path.resolve(import.meta.dirname) },
      { find: 'server-only', replacement: path.resolve(import.meta.dirname, 'tests/setup/server-only-stub.ts') },
      // The package's entry points, from source, as examples/ and docs/testing.md import them.
      { find: /^refwatch\/([a-z]+)$/, replacement: path.resolve(import.meta.dirname, 'lib/$1/index.ts') },
    ],
  },
  test: {
    setupFiles: ['tests/setup/state-home.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['tests/unit/**/*.test.ts', 'tests/unit/**/*.test.tsx'],
          environment: 'node',
          testTimeout: 20_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['tests/integration/**/*.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 180_000,
          fileParallelism: false,
          globalSetup: ['tests/setup/global-setup.ts'],
        },
      },
    ],
  },
});
