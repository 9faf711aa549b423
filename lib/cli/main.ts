#!/usr/bin/env node
import { main } from './program';

// `refwatch … | head`: the reader is gone, so is the point of writing more.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw e;
});

process.exitCode = await main(process.argv);
