export * from './edit-distance';
export * from './duration';
export * from './similar-names';
export * from './reference-diagnosis';
export * from './explain';
export * from './stuck';
export * from './kubectl';
export * from './producers';
