import { describe, expect, it } from 'vitest';
import { parseApiError } from '@/components/demo/api';
import { DEFAULT_FORM, fieldMessage, formFieldOf, formToRequest } from '@/components/demo/request';
import { isActivePhase } from '@/components/demo/runView';

describe('formToRequest', () => {
  it('sends seconds as milliseconds and the API defaults for optional counts', () => {
    const body = formToRequest({ ...DEFAULT_FORM, apps: '10', readyMinS: '1', readyMaxS: '4', timeoutS: '60' });
    expect(body).toEqual({
      apps: 10,
      readyAfter: { distribution: 'uniform', minMs: 1000, maxMs: 4000 },
      dangling: { typo: 0.02, wrongNamespace: 0.01, kindNotInstalled: 0.01 },
      backoffPreset: 'client-go',
      timeoutMs: 60_000,
    });
  });

  it('sets the same referent count for each kind when given', () => {
    const body = formToRequest({ ...DEFAULT_FORM, referents: '3' });
    expect([body.databases, body.caches, body.secrets]).toEqual([3, 3, 3]);
  });

  it('adds churn of the Cache kind only when it is on', () => {
    expect(formToRequest({ ...DEFAULT_FORM, churn: false, churnAfterS: '5' }).churn).toBeUndefined();
    expect(formToRequest({ ...DEFAULT_FORM, churn: true, churnAfterS: '2.5' }).churn).toEqual({
      dropKind: 'Cache',
      afterMs: 2500,
    });
  });

  it('sends an empty or non-numeric required value as null, so the API names the field', () => {
    const body = formToRequest({ ...DEFAULT_FORM, apps: '', timeoutS: 'abc' });
    expect(body.apps).toBeNull();
    expect(body.timeoutMs).toBeNull();
  });

  it('treats empty dangling shares as none', () => {
    expect(formToRequest({ ...DEFAULT_FORM, typo: '', wrongNamespace: '', kindNotInstalled: '' }).dangling).toEqual({
      typo: 0,
      wrongNamespace: 0,
      kindNotInstalled: 0,
    });
  });

  it('sends the chosen backoff preset', () => {
    expect(formToRequest({ ...DEFAULT_FORM, backoffPreset: 'crossplane' }).backoffPreset).toBe('crossplane');
  });
});

describe('API errors next to their input', () => {
  it('maps the API field to the input that produced it', () => {
    expect(formFieldOf('apps')).toBe('apps');
    expect(formFieldOf('caches')).toBe('referents');
    expect(formFieldOf('readyAfter.maxMs')).toBe('readyMaxS');
    expect(formFieldOf('dangling.typo')).toBe('typo');
    expect(formFieldOf('churn.afterMs')).toBe('churnAfterS');
    expect(formFieldOf('timeoutMs')).toBe('timeoutS');
  });

  it('leaves errors about the request as a whole to the form', () => {
    expect(formFieldOf('id')).toBeUndefined();
    expect(formFieldOf('origin')).toBeUndefined();
    expect(formFieldOf(undefined)).toBeUndefined();
  });

  it('drops the field prefix, and states millisecond bounds in seconds for inputs typed in seconds', () => {
    expect(fieldMessage('apps', 'apps: must be at most 5000')).toBe('must be at most 5000');
    expect(fieldMessage('timeoutMs', 'timeoutMs: must be at least 1000 ms')).toBe('must be at least 1 s');
    expect(fieldMessage('readyAfter.maxMs', 'readyAfter.maxMs: must be at most 600000 ms (10 minutes)')).toBe(
      'must be at most 600 s (10 minutes)',
    );
    expect(fieldMessage('timeoutMs', 'timeoutMs: must be a number of milliseconds from 1000 to 600000')).toBe(
      'must be a number of seconds from 1 to 600',
    );
    expect(fieldMessage('dangling.typo', 'dangling.typo: the fractions must add up to at most 1')).toBe(
      'the fractions must add up to at most 1',
    );
  });

  it('reads the error envelope, and names the request when the body is not one', () => {
    const e = parseApiError(
      400,
      { error: { code: 'InvalidBody', message: 'apps: must be at least 1', field: 'apps' } },
      'POST /api/v1/demo/runs',
    );
    expect([e.status, e.code, e.field, e.message]).toEqual([400, 'InvalidBody', 'apps', 'apps: must be at least 1']);
    const plain = parseApiError(502, 'Bad Gateway', 'POST /api/v1/demo/runs');
    expect(plain.message).toBe('POST /api/v1/demo/runs answered 502');
    expect(plain.field).toBeUndefined();
  });
});

describe('polling', () => {
  it('polls only while a run is creating or running', () => {
    expect(isActivePhase('Creating')).toBe(true);
    expect(isActivePhase('Running')).toBe(true);
    for (const p of ['Completed', 'TimedOut', 'Stopped', 'Failed'] as const) expect(isActivePhase(p)).toBe(false);
    expect(isActivePhase(undefined)).toBe(false);
  });
});
