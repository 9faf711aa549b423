export * from './entities';
export * from './wire';
export * from './change-log';
export * from './codec';
export type { Rows } from './chunked';
