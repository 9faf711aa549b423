export * from './field-path';
export * from './schema';
export * from './parse';
export * from './load';
export * from './rule-set';
export * from './extract';
export * from './readiness';
export * from './packs';
