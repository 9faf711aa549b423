// Stands in for the 'server-only' package in tests: server modules run under Vitest and tsx as plain Node.
export {};
