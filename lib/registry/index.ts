export * from './reference-registry';
