export * from './errors';
export * from './validation';
export * from './gvk';
export * from './keys';
export * from './reference';
export * from './readonly';
export * from './selector';
