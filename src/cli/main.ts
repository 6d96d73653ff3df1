#!/usr/bin/env node
/** The servesim executable: runs `cli.ts`'s `main` on the process's arguments and exits with its status. */
import { hideBin } from 'yargs/helpers';
import { main } from './cli.js';

const code = await main(hideBin(process.argv));
process.exitCode = code;
