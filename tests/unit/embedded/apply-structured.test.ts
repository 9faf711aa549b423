import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { applyConfiguration, updateManagedFields, type WriteContext } from '@/lib/embedded/apply/field-manager';
import { FieldSet, fromFieldsV1, pathString, toFieldsV1 } from '@/lib/embedded/apply/fieldset';
import { BUILTIN_SCHEMAS } from '@/lib/embedded/builtin-schemas.generated';
import { compare, fieldSetOf, merge } from '@/lib/embedded/apply/structured';
import { ApiError } from '@/lib/embedded/status';

const apps = BUILTIN_SCHEMAS['apis/apps/v1']!;
const deploymentType = { schema: apps['io.k8s.api.apps.v1.Deployment']!, components: apps };
const writer = (manager: string): WriteContext => ({
  type: deploymentType,
  manager,
  apiVersion: 'apps/v1',
  subresource: '',
  statusSubresource: true,
});

const deployment = (containers: object[], replicas?: number) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop' },
  spec: { ...(replicas === undefined ? {} : { replicas }), template: { spec: { containers } } },
});

const container = fc.record(
  {
    name: fc.constantFrom('app', 'proxy', 'init', 'log'),
    image: fc.constantFrom('a:1', 'a:2', 'b:1'),
    args: fc.array(fc.constantFrom('-v', '--x', '1'), { maxLength: 3 }),
    env: fc.uniqueArray(fc.record({ name: fc.constantFrom('A', 'B', 'C'), value: fc.constantFrom('1', '2') }), {
      selector: (e) => e.name,
      // An empty list is kept as sent here, where kube-apiserver's typed objects drop it (docs/embedded.md).
      minLength: 1,
      maxLength: 3,
    }),
  },
  { requiredKeys: ['name'] },
);
const containers = fc.uniqueArray(container, { selector: (c) => c.name, minLength: 1, maxLength: 3 });
const config = fc.tuple(containers, fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }));

describe('structured merge by the OpenAPI schemas', () => {
  it('spells field sets as FieldsV1, with `.` on a member that has children, and reads them back', () => {
    const set = fieldSetOf(
      deployment([{ name: 'app', ports: [{ containerPort: 80, protocol: 'TCP' }] }]),
      deploymentType,
    );
    const spec = toFieldsV1(set) as any;
    expect(spec['f:spec']['f:template']['f:spec']['f:containers']).toEqual({
      'k:{"name":"app"}': {
        '.': {},
        'f:name': {},
        'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} } },
      },
    });
    expect(fromFieldsV1(toFieldsV1(set)).equals(set)).toBe(true);
    expect(pathString(['f:spec', 'k:{"containerPort":80,"protocol":"TCP"}', 'v:"x"', 'i:2'])).toBe(
      '.spec[containerPort=80,protocol="TCP"][="x"][2]',
    );
  });

  it('keeps live list-map items in place and replaces atomic lists (args) whole', () => {
    const live = deployment([
      { name: 'app', image: 'a:1', args: ['-v', '1'], env: [{ name: 'A', value: '1' }] },
      { name: 'log', image: 'b:1' },
    ]);
    const out = merge(
      live,
      deployment([{ name: 'proxy' }, { name: 'app', args: ['--x'], env: [{ name: 'B', value: '2' }] }]),
      deploymentType,
    ) as any;
    expect(out.spec.template.spec.containers).toEqual([
      {
        name: 'app',
        image: 'a:1',
        args: ['--x'],
        env: [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' },
        ],
      },
      { name: 'log', image: 'b:1' },
      { name: 'proxy' },
    ]);
  });

  it('property: applying the same configuration twice changes nothing the second time', () => {
    fc.assert(
      fc.property(config, config, ([a, ra], [b, rb]) => {
        const first = applyConfiguration(writer('ctl'), undefined, deployment(a, ra), false);
        const live1 = {
          ...first.object,
          metadata: { ...(first.object.metadata as object), managedFields: first.managedFields },
        };
        const second = applyConfiguration(writer('ctl'), live1, deployment(b, rb), false);
        const live2 = {
          ...second.object,
          metadata: { ...(second.object.metadata as object), managedFields: second.managedFields },
        };
        const third = applyConfiguration(writer('ctl'), live2, deployment(b, rb), false);
        expect(third.object).toEqual(second.object);
        expect(third.managedFields).toEqual(second.managedFields);
        // A sole applier's object is its configuration: what it dropped is gone.
        const c = compare(second.object, deployment(b, rb), deploymentType);
        expect([c.added.size, c.modified.size, c.removed.size]).toEqual([0, 0, 0]);
      }),
      { numRuns: 100 },
    );
  });

  it('property: an applier conflicts exactly when it changes a field an updater set', () => {
    fc.assert(
      fc.property(config, config, ([a, ra], [b, rb]) => {
        const created = deployment(a, ra);
        const managedFields = updateManagedFields(writer('editor'), undefined, created);
        const live = { ...created, metadata: { ...created.metadata, managedFields } };
        const changed = compare(created, merge(created, deployment(b, rb), deploymentType), deploymentType);
        const expectConflict = !changed.modified
          .union(changed.added)
          .intersection(fromFieldsV1(managedFields[0]!.fieldsV1)).empty;
        let status: number | undefined;
        try {
          applyConfiguration(writer('ctl'), live, deployment(b, rb), false);
        } catch (e) {
          status = (e as ApiError).status.code;
        }
        expect(status).toBe(expectConflict ? 409 : undefined);
        // Forced, it never conflicts, and the editor keeps only fields the applier did not change.
        const forced = applyConfiguration(writer('ctl'), live, deployment(b, rb), true);
        const editor = forced.managedFields.find((e) => e.manager === 'editor');
        const left = editor ? fromFieldsV1(editor.fieldsV1) : new FieldSet();
        expect(left.intersection(changed.modified).empty).toBe(true);
      }),
      { numRuns: 100 },
    );
  });
});
