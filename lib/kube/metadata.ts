import { compactMetadata, trimManagedFields, type KubeObject } from '../model';

/*
 * Metadata-only caches. kube-apiserver sends any resource as
 * PartialObjectMetadata (apiVersion, kind and metadata only) when the Accept
 * header asks for it: lists as PartialObjectMetadataList, watch events as
 * PartialObjectMetadata. No fallback media type is offered: a server that
 * cannot convert answers 406 instead of sending whole objects, so a Secret's
 * data never reaches this process.
 */

/** Accept header of a metadata-only list. */
export const ACCEPT_METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
/** Accept header of a metadata-only watch (each event's object is a PartialObjectMetadata). */
export const ACCEPT_METADATA = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

/**
 * kubectl apply copies the whole applied object into this annotation: for a
 * Secret, its data. A metadata-only cache never keeps it.
 */
export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * toMetadataOnly keeps apiVersion, kind and metadata of an object, stamped
 * with the resource's own apiVersion and kind (the server sends
 * meta.k8s.io/v1 PartialObjectMetadata), without managedFields (but the
 * last manager's name, keepLastManager) and without the
 * last-applied-configuration annotation. The metadata it keeps may be obj's
 * own, trimmed in place: obj is meant to be an object just parsed.
 */
export function toMetadataOnly(obj: KubeObject, apiVersion: string, kind: string): KubeObject {
  const annotations = obj.metadata.annotations;
  if (!annotations || !Object.hasOwn(annotations, LAST_APPLIED)) {
    return { apiVersion, kind, metadata: trimManagedFields(obj.metadata) };
  }
  const metadata = compactMetadata(obj.metadata, (field) => field === 'annotations');
  const { [LAST_APPLIED]: _applied, ...rest } = annotations;
  if (Object.keys(rest).length > 0) metadata.annotations = rest;
  return { apiVersion, kind, metadata };
}
