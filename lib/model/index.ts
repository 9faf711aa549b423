export * from './errors';
export * from './validation';
export * from './gvk';
export * from './keys';
export * from './reference';
export * from './readonly';
export { follow } from './abort';
export * from './managed-fields';
export * from './selector';
