import { describe, expect, it } from 'vitest';
import { parseMemoryLimit } from '../../../bench/peer/memory-limit';

describe('REFWATCH_PEER_MEMORY_LIMIT', () => {
  it('reads a Kubernetes quantity in Ki, Mi or Gi', () => {
    expect(parseMemoryLimit('128Mi')).toBe(128 * 2 ** 20);
    expect(parseMemoryLimit(' 1Gi ')).toBe(2 ** 30);
    expect(parseMemoryLimit('512Ki')).toBe(512 * 2 ** 10);
  });

  it('names the variable and an example for anything else', () => {
    for (const bad of ['128', '128MB', '0Mi', '-1Mi', 'lots'])
      expect(() => parseMemoryLimit(bad)).toThrow(
        `REFWATCH_PEER_MEMORY_LIMIT: "${bad}" is not a memory limit in Ki, Mi or Gi, e.g. 128Mi`,
      );
  });
});
