import protobuf from 'protobufjs';
import { badRequest, unsupportedMediaType } from './status';

export const PROTOBUF = 'application/vnd.kubernetes.protobuf';

/**
 * The messages of the built-in kinds whose bodies kubectl's typed clients send as protobuf (its `create`
 * generators and `auth can-i`), written for this project from the field numbers in Kubernetes' published API
 * (the `protobuf:"…"` tags of k8s.io/api and k8s.io/apimachinery). Only what a request body carries is here.
 */
const PROTO = `
syntax = "proto2";
package k8s;

message Unknown { optional TypeMeta typeMeta = 1; optional bytes raw = 2; optional string contentEncoding = 3; optional string contentType = 4; }
message TypeMeta { optional string apiVersion = 1; optional string kind = 2; }
message Time { optional int64 seconds = 1; optional int32 nanos = 2; }
message FieldsV1 { optional bytes Raw = 1; }
message OwnerReference { optional string kind = 1; optional string name = 3; optional string uid = 4; optional string apiVersion = 5; optional bool controller = 6; optional bool blockOwnerDeletion = 7; }
message ManagedFieldsEntry { optional string manager = 1; optional string operation = 2; optional string apiVersion = 3; optional Time time = 4; optional string fieldsType = 6; optional FieldsV1 fieldsV1 = 7; optional string subresource = 8; }
message ObjectMeta {
  optional string name = 1; optional string generateName = 2; optional string namespace = 3; optional string selfLink = 4;
  optional string uid = 5; optional string resourceVersion = 6; optional int64 generation = 7;
  optional Time creationTimestamp = 8; optional Time deletionTimestamp = 9; optional int64 deletionGracePeriodSeconds = 10;
  map<string, string> labels = 11; map<string, string> annotations = 12; repeated OwnerReference ownerReferences = 13;
  repeated string finalizers = 14; repeated ManagedFieldsEntry managedFields = 17;
}

message Secret { optional ObjectMeta metadata = 1; map<string, bytes> data = 2; optional string type = 3; map<string, string> stringData = 4; optional bool immutable = 5; }
message ConfigMap { optional ObjectMeta metadata = 1; map<string, string> data = 2; map<string, bytes> binaryData = 3; optional bool immutable = 4; }
message NamespaceSpec { repeated string finalizers = 1; }
message Namespace { optional ObjectMeta metadata = 1; optional NamespaceSpec spec = 2; }
message ObjectReference { optional string kind = 1; optional string namespace = 2; optional string name = 3; optional string uid = 4; optional string apiVersion = 5; optional string resourceVersion = 6; optional string fieldPath = 7; }
message LocalObjectReference { optional string name = 1; }
message ServiceAccount { optional ObjectMeta metadata = 1; repeated ObjectReference secrets = 2; repeated LocalObjectReference imagePullSecrets = 3; optional bool automountServiceAccountToken = 4; }

message SelectorRequirement { optional string key = 1; optional string operator = 2; repeated string values = 3; }
message SelectorAttributes { optional string rawSelector = 1; repeated SelectorRequirement requirements = 2; }
message ResourceAttributes {
  optional string namespace = 1; optional string verb = 2; optional string group = 3; optional string version = 4;
  optional string resource = 5; optional string subresource = 6; optional string name = 7;
  optional SelectorAttributes fieldSelector = 8; optional SelectorAttributes labelSelector = 9;
}
message NonResourceAttributes { optional string path = 1; optional string verb = 2; }
message SelfSubjectAccessReviewSpec { optional ResourceAttributes resourceAttributes = 1; optional NonResourceAttributes nonResourceAttributes = 2; }
message SelfSubjectAccessReview { optional ObjectMeta metadata = 1; optional SelfSubjectAccessReviewSpec spec = 2; }
message SelfSubjectRulesReviewSpec { optional string namespace = 1; }
message SelfSubjectRulesReview { optional ObjectMeta metadata = 1; optional SelfSubjectRulesReviewSpec spec = 2; }
`;

/** apiVersion/kind → the message its body decodes with. */
const MESSAGES: Record<string, string> = {
  'v1/Secret': 'k8s.Secret',
  'v1/ConfigMap': 'k8s.ConfigMap',
  'v1/Namespace': 'k8s.Namespace',
  'v1/ServiceAccount': 'k8s.ServiceAccount',
  'authorization.k8s.io/v1/SelfSubjectAccessReview': 'k8s.SelfSubjectAccessReview',
  'authorization.k8s.io/v1/SelfSubjectRulesReview': 'k8s.SelfSubjectRulesReview',
};

/** The kinds whose protobuf bodies are decoded, for error messages and docs. */
export const PROTOBUF_KINDS = Object.keys(MESSAGES);

/** time.Time{}.Unix(): 0001-01-01T00:00:00Z. */
const ZERO_TIME_SECONDS = -62135596800;

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]); // "k8s\0"

let root: protobuf.Root | undefined;
function types(): protobuf.Root {
  root ??= protobuf.parse(PROTO, { keepCase: true }).root;
  return root;
}

/**
 * decodeProtobuf decodes a Kubernetes protobuf request body (`k8s\0` + runtime.Unknown wrapping the object's
 * own message) into the object's JSON form, as kube-apiserver's JSON serializer would print it.
 */
export function decodeProtobuf(body: Buffer): Record<string, unknown> {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC))
    throw badRequest('the protobuf body does not start with the Kubernetes envelope prefix "k8s\\x00"');
  let unknown: { typeMeta?: { apiVersion?: string; kind?: string }; raw?: Uint8Array };
  try {
    unknown = types().lookupType('k8s.Unknown').decode(body.subarray(MAGIC.length)) as typeof unknown;
  } catch (e) {
    throw badRequest(`the protobuf envelope (runtime.Unknown) does not decode: ${(e as Error).message}`);
  }
  const apiVersion = unknown.typeMeta?.apiVersion ?? '';
  const kind = unknown.typeMeta?.kind ?? '';
  const message = MESSAGES[`${apiVersion}/${kind}`];
  if (!message) {
    // kubectl and client-go fall back to JSON on 415.
    throw unsupportedMediaType(`${PROTOBUF} (${apiVersion}, Kind=${kind})`, ['application/json', 'application/yaml']);
  }
  const type = types().lookupType(message);
  let decoded: protobuf.Message;
  try {
    decoded = type.decode(unknown.raw ?? new Uint8Array());
  } catch (e) {
    throw badRequest(`the protobuf body of ${kind} does not decode: ${(e as Error).message}`);
  }
  const obj = type.toObject(decoded, { longs: Number, bytes: String, defaults: false }) as Record<string, unknown>;
  return { apiVersion, kind, ...(jsonForm(obj) as Record<string, unknown>) };
}

/** jsonForm turns protobuf's shapes into the JSON API's: Times into RFC 3339 strings, FieldsV1 into its JSON. */
function jsonForm(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(jsonForm);
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(o)) {
    if ((k.endsWith('Timestamp') || k === 'time') && x && typeof x === 'object') {
      const t = x as { seconds?: number; nanos?: number };
      // Go's zero time (year 1) is what a typed client sends for "unset"; JSON says null, which is left out.
      if ((t.seconds ?? 0) > ZERO_TIME_SECONDS)
        out[k] = new Date((t.seconds ?? 0) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    } else if (k === 'fieldsV1' && x && typeof x === 'object') {
      const raw = (x as { Raw?: string }).Raw;
      out[k] = raw ? JSON.parse(Buffer.from(raw, 'base64').toString('utf8')) : {};
    } else if (x !== '') {
      // Go sends every non-pointer string, "" included; JSON's omitempty leaves "" out, as kube-apiserver prints.
      out[k] = jsonForm(x);
    }
  }
  return out;
}

/** encodeProtobuf is decodeProtobuf's inverse for the same kinds, for tests that speak as kubectl does. */
export function encodeProtobuf(obj: { apiVersion: string; kind: string } & Record<string, unknown>): Buffer {
  const message = MESSAGES[`${obj.apiVersion}/${obj.kind}`];
  if (!message) throw new Error(`encodeProtobuf: no message for ${obj.apiVersion}, Kind=${obj.kind}`);
  const type = types().lookupType(message);
  const { apiVersion, kind, ...rest } = obj;
  const raw = type.encode(type.fromObject(rest)).finish();
  const unknownType = types().lookupType('k8s.Unknown');
  const envelope = unknownType.encode(unknownType.fromObject({ typeMeta: { apiVersion, kind }, raw })).finish();
  return Buffer.concat([MAGIC, envelope]);
}
