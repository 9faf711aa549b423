export { Backoff, sleep, type BackoffOptions } from './backoff';
export { KubeClient, type AuthKind, type ClientOptions, type ClusterDescription } from './client';
export { parseKubeconfig } from './kubeconfig';
export { type KubeTransport, type Query, type ReadOptions, type WatchStream } from './transport';
export {
  Discovery,
  resourceForKind,
  resourcePath,
  versionsOf,
  type APIGroupList,
  type APIResourceList,
  type ResourceInfo,
} from './discovery';
export {
  KubeRequestError,
  Redactor,
  WatchFailure,
  formatRule,
  isAbortError,
  kindUnknown,
  missingRule,
  parseRetryAfter,
} from './errors';
export {
  createLogger,
  defaultLogger,
  formatJsonLine,
  formatTextLine,
  parseLogLevel,
  type LogFields,
  type LogLevel,
  type Logger,
  type LoggerOptions,
} from '../log';
export {
  LeaseLock,
  formatMicroTime,
  parseMicroTime,
  type LeaseLockOptions,
  type LeaseTransport,
  type LeaseWatchUnavailable,
} from './lease-lock';
export { LogRateLimiter, type LogPermit } from './log-rate-limiter';
export { ACCEPT_METADATA, ACCEPT_METADATA_LIST, LAST_APPLIED, toMetadataOnly } from './metadata';
export { Reflector, stripManagedFields, type ReflectorOptions, type ReflectorStatus, type SyncMode } from './reflector';
export { SharedInformerPool, type SharedInformerPoolOptions } from './shared-informer-pool';
export { Store, diffSnapshots, type StoreEvent } from './store';
export {
  WatchTelemetry,
  type RelistReason,
  type WatchCount,
  type WatchEndReason,
  type WatchLifecycle,
} from './watch-telemetry';
