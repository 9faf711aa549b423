export * from './referent-lookup';
export * from './referent-caches';
export * from './check';
export * from './review';
export * from './grace';
export * from './admission';
export * from './server';
export * from './certificate';
