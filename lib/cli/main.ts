#!/usr/bin/env node
import { main } from './program';

process.exitCode = await main(process.argv);
