import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/',
      '.next/',
      'test-results/',
      'playwright-report/',
      'next-env.d.ts',
      'lib/dist/',
      'examples/controller/dist/',
      'bench/out/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    files: ['tests/**/*.ts', 'tests/**/*.tsx', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
      },
    },
  },
  {
    files: ['lib/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: ['@/server/*', '@/components/*', '@/app/*', 'next', 'next/*', 'react', 'react-dom'] },
      ],
    },
  },
  {
    // The engine sees watches through the InformerSource interface and locks through ResourceLock, never the client.
    files: ['lib/engine/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            '@/server/*',
            '@/components/*',
            '@/app/*',
            'next',
            'next/*',
            'react',
            'react-dom',
            '../kube',
            '../kube/*',
            '@/lib/kube',
            '@/lib/kube/*',
            '../embedded',
            '../embedded/*',
            '../testing',
            '../testing/*',
          ],
        },
      ],
    },
  },
  {
    // The embedded API server is the cluster's side of the wire: it reads the model, never the client, the engine
    // or the test harness built on it.
    files: ['lib/embedded/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            '@/server/*',
            '@/components/*',
            '@/app/*',
            'next',
            'next/*',
            'react',
            'react-dom',
            '../engine',
            '../engine/*',
            '../kube',
            '../kube/*',
            '../testing',
            '../testing/*',
            '@/lib/engine*',
            '@/lib/kube*',
            '@/lib/testing*',
          ],
        },
      ],
    },
  },
  prettier,
);
