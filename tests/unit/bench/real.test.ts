import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { realCluster } from '@/bench/real';

const saved = { PATH: process.env.PATH, REFWATCH_CACHE: process.env.REFWATCH_CACHE };
let cache: string | undefined;
afterEach(() => {
  process.env.PATH = saved.PATH;
  if (saved.REFWATCH_CACHE === undefined) delete process.env.REFWATCH_CACHE;
  else process.env.REFWATCH_CACHE = saved.REFWATCH_CACHE;
  if (cache) rmSync(cache, { recursive: true, force: true });
  cache = undefined;
});

describe('realCluster', () => {
  it('fails, saying what to do, when kube-apiserver cannot be had, instead of skipping', async () => {
    // An empty cache and no Go toolchain on PATH: tests/setup cannot build the binaries.
    cache = mkdtempSync(path.join(os.tmpdir(), 'refwatch-bench-real-'));
    process.env.REFWATCH_CACHE = cache;
    process.env.PATH = '/usr/bin:/bin';
    await expect(realCluster('kube')).rejects.toThrow(
      /^bench kube: REFWATCH_BENCH_REAL=1 asks for a real kube-apiserver, which cannot start \(.*no Go toolchain on PATH\); build it with bash tests\/setup\/build-real-cluster.sh, or unset REFWATCH_BENCH_REAL$/,
    );
  });
});
