import { describe, expect, it } from 'vitest';
import { ApiError } from '@/lib/embedded/status';
import { negotiate, parseAccept } from '@/lib/embedded/negotiation';

/** refusal returns the Status negotiate throws for accept, or undefined when it answers. */
function refusal(accept: string, collection = true) {
  try {
    negotiate(accept, collection);
    return undefined;
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return e.status;
  }
}

describe('embedded API server: output negotiation', () => {
  it('orders clauses by preference, then by specificity, then as written', () => {
    const order = parseAccept(
      '*/*;q=0.8, application/*, application/json;as=Table;g=meta.k8s.io;v=v1, text/html;q=0',
    ).map((c) => `${c.type}/${c.subtype};${c.q}`);
    expect(order).toEqual(['application/json;1', 'application/*;1', '*/*;0.8', 'text/html;0']);
  });

  it('answers plain JSON without an Accept header, or for */* and application/json', () => {
    for (const accept of [
      undefined,
      '',
      '*/*',
      'application/json',
      'application/vnd.kubernetes.protobuf, application/json',
      'application/json;stream=watch',
    ]) {
      expect(negotiate(accept, true)).toEqual({ as: 'object' });
    }
  });

  it('converts to PartialObjectMetadata, its list, or a Table in meta.k8s.io v1 and v1beta1', () => {
    expect(negotiate('application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1', true)).toEqual({
      as: 'PartialObjectMetadataList',
      apiVersion: 'meta.k8s.io/v1',
    });
    expect(negotiate('application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1', false)).toEqual({
      as: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1beta1',
    });
    expect(negotiate('application/json;as=Table;v=v1;g=meta.k8s.io,application/json', false)).toEqual({
      as: 'Table',
      apiVersion: 'meta.k8s.io/v1',
    });
  });

  it('falls back to the next clause it can honour, and honours preference over order', () => {
    expect(negotiate('application/json;as=Foo;g=meta.k8s.io;v=v1, application/json', true)).toEqual({ as: 'object' });
    expect(
      negotiate('application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1;q=0.5, application/json;q=0.9', true),
    ).toEqual({ as: 'object' });
    expect(negotiate('application/yaml, application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1', false)).toEqual({
      as: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
    });
  });

  it("refuses a conversion it cannot make with the negotiator's 406, which has no details", () => {
    for (const accept of [
      'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v2',
      'application/json;as=PartialObjectMetadataList;g=apps;v=v1',
      'application/json;as=PartialObjectMetadataList',
      'application/json;as=Foo;g=meta.k8s.io;v=v1',
      'application/json;sv=v1',
      'application/json;stream=other',
    ]) {
      expect(refusal(accept)).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'only the following media types are accepted: application/json',
        reason: 'NotAcceptable',
        code: 406,
      });
    }
  });

  it("refuses a media type it does not produce with go-restful's 406, listing what the route produces", () => {
    expect(refusal('text/html')).toMatchObject({
      code: 406,
      reason: 'NotAcceptable',
      details: {},
      message: '406: Not Acceptable\n\nAvailable representations: application/json, application/json;stream=watch',
    });
    expect(refusal('application/yaml', false)).toMatchObject({
      code: 406,
      details: {},
      message: '406: Not Acceptable\n\nAvailable representations: application/json',
    });
    expect(refusal('application/json;q=0')).toMatchObject({ code: 406, details: {} });
  });
});
