export * from './clock';
export * from './deque';
export * from './metrics';
export * from './work-queue';
export * from './waiting-heap';
export * from './delaying-queue';
export * from './rate-limiters';
export * from './rate-limiting-queue';
