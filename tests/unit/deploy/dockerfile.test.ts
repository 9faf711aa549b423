import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * CI cannot build the image (no container engine, no registry for the base
 * image). It builds and tests what the Dockerfile's build stage builds, so
 * these checks keep the Dockerfile on that same path, and its final stage lean.
 */
const text = readFileSync(path.resolve(import.meta.dirname, '../../../Dockerfile'), 'utf8');

interface Stage {
  name: string;
  lines: string[];
}

function stages(dockerfile: string): Stage[] {
  const out: Stage[] = [];
  const joined = dockerfile.replace(/\\\n\s*/g, ' ');
  for (const raw of joined.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const from = /^FROM\s+\S+(?:\s+AS\s+(\S+))?/i.exec(line);
    if (from) out.push({ name: from[1] ?? `stage${out.length}`, lines: [] });
    else out.at(-1)?.lines.push(line);
  }
  return out;
}

const all = stages(text);
const final = all.at(-1)!;
const instr = (s: Stage, word: string) => s.lines.filter((l) => l.toUpperCase().startsWith(`${word} `));

describe('Dockerfile', () => {
  it('builds in stages: dependencies, build, runtime', () => {
    expect(all.map((s) => s.name)).toEqual(['deps', 'build', 'runtime']);
    expect(instr(all[0]!, 'RUN').join('\n')).toContain('npm ci');
  });

  it('builds with scripts/build-standalone.ts, the script the standalone test runs', () => {
    expect(instr(all[1]!, 'RUN')).toEqual(['RUN npx tsx scripts/build-standalone.ts']);
  });

  it('ships only the standalone output, owned by root, run by a numeric non-root user', () => {
    expect(instr(final, 'COPY')).toEqual(['COPY --from=build --chown=0:0 /src/.next/standalone ./']);
    const user = instr(final, 'USER');
    expect(user).toHaveLength(1);
    const [uid, gid] = user[0]!.slice(5).split(':').map(Number);
    expect(uid).toBeGreaterThan(0);
    expect(gid).toBeGreaterThan(0);
  });

  it('removes npm and installs nothing in the final stage', () => {
    const runs = instr(final, 'RUN').join('\n');
    expect(runs).toMatch(/rm -rf .*\/usr\/local\/lib\/node_modules/);
    expect(runs).not.toMatch(/apt-get|npm (ci|install)|apk add/);
  });

  it('checks health with node, not curl, and starts node server.js', () => {
    const health = instr(final, 'HEALTHCHECK');
    expect(health).toHaveLength(1);
    expect(health[0]).toContain('CMD ["node", "-e"');
    expect(health[0]).toContain('/healthz');
    expect(instr(final, 'CMD')).toEqual(['CMD ["node", "server.js"]']);
  });
});
