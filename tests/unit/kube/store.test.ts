import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '@/lib/model';
import { Store, diffSnapshots } from '@/lib/kube/store';

const obj = (name: string, uid: string, rv: string): KubeObject => ({
  apiVersion: 'demo.refwatch.dev/v1alpha1',
  kind: 'Database',
  metadata: { name, namespace: 'shop', uid, resourceVersion: rv },
});
const key = (name: string) => `Database.demo.refwatch.dev/shop/${name}`;
const kinds = (events: { type: string; key: string }[]) => events.map((e) => `${e.type} ${e.key.split('/')[2]}`);

describe('Store', () => {
  it('reports add, update and delete of one object', () => {
    const s = new Store();
    expect(kinds(s.upsert(key('a'), obj('a', 'u1', '1')))).toEqual(['added a']);
    const upd = s.upsert(key('a'), obj('a', 'u1', '2'));
    expect(kinds(upd)).toEqual(['updated a']);
    expect(upd[0]).toMatchObject({ old: { metadata: { resourceVersion: '1' } } });
    expect(kinds(s.remove(key('a'), obj('a', 'u1', '3')))).toEqual(['deleted a']);
    expect(s.size).toBe(0);
  });

  it('changes keysVersion when a key enters or leaves, not when an object is updated', () => {
    const s = new Store();
    const seen = [s.keysVersion];
    const step = () => seen.push(s.keysVersion);
    s.upsert(key('a'), obj('a', 'u1', '1'));
    step();
    s.upsert(key('a'), obj('a', 'u1', '2'));
    step();
    s.remove(key('a'), obj('a', 'u1', '3'));
    step();
    s.remove(key('a'), obj('a', 'u1', '3'));
    step();
    s.replace(new Map([[key('b'), obj('b', 'u2', '4')]]));
    step();
    // added, the same, removed, the same (nothing to remove), relisted
    expect(seen.map((v, i) => (i === 0 ? 'start' : v === seen[i - 1] ? 'same' : 'changed'))).toEqual([
      'start',
      'changed',
      'same',
      'changed',
      'same',
      'changed',
    ]);
  });

  it('treats a new UID under the same name as a deletion and a creation', () => {
    const s = new Store();
    s.upsert(key('a'), obj('a', 'u1', '1'));
    const events = s.upsert(key('a'), obj('a', 'u2', '5'));
    expect(kinds(events)).toEqual(['deleted a', 'added a']);
    expect(events[0]!.object.metadata.uid).toBe('u1');
    expect(events[1]!.object.metadata.uid).toBe('u2');
  });

  it('stays silent when a restarted watch replays a version it holds', () => {
    const s = new Store();
    s.upsert(key('a'), obj('a', 'u1', '1'));
    expect(s.upsert(key('a'), obj('a', 'u1', '1'))).toEqual([]);
  });

  it('ignores the deletion of an object it never had', () => {
    expect(new Store().remove(key('x'), obj('x', 'u', '1'))).toEqual([]);
  });

  it('on relist reports objects gone since the last list as deletes, recreated ones as delete + add', () => {
    const s = new Store();
    s.replace(
      new Map([
        [key('a'), obj('a', 'u1', '1')],
        [key('b'), obj('b', 'u2', '2')],
        [key('c'), obj('c', 'u3', '3')],
      ]),
    );
    const events = s.replace(
      new Map([
        [key('b'), obj('b', 'u2', '2')], // unchanged
        [key('c'), obj('c', 'u9', '7')], // recreated
        [key('d'), obj('d', 'u4', '8')], // new
      ]),
    );
    expect(kinds(events)).toEqual(['deleted a', 'deleted c', 'added c', 'added d']);
    expect([...s.keys()].sort()).toEqual([key('b'), key('c'), key('d')]);
  });

  it('diff of two snapshots replayed on the first yields the second (property)', () => {
    const snapshot = fc
      .uniqueArray(
        fc.record({
          name: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
          uid: fc.constantFrom('1', '2'),
          rv: fc.constantFrom('1', '2', '3'),
        }),
        {
          selector: (o) => o.name,
        },
      )
      .map((xs) => new Map(xs.map((x) => [key(x.name), obj(x.name, x.uid, x.rv)] as const)));
    fc.assert(
      fc.property(snapshot, snapshot, (prev, next) => {
        const state = new Map(prev);
        for (const e of diffSnapshots(prev, next)) {
          if (e.type === 'deleted') {
            expect(state.get(e.key)).toBe(e.object);
            state.delete(e.key);
          } else {
            if (e.type === 'added') expect(state.has(e.key)).toBe(false);
            state.set(e.key, e.object);
          }
        }
        expect(state).toEqual(next);
      }),
    );
  });
});
