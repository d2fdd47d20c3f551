import fs from 'node:fs';
import os from 'node:os';

import { createLevelLog } from '../../src/events/level-log.js';
import { createMemoryLog } from '../../src/events/memory-log.js';
import { createPgLog } from '../../src/events/pg-log.js';
import { TEST_PG, createTestDatabase } from '../helpers/postgres.js';
import { eventLogContract } from './event-log.contract.js';

eventLogContract('memory', (options) => {
  const log = createMemoryLog(options);
  return { log, reopen: () => log, cleanup: async () => undefined };
});

eventLogContract('level', (options) => {
  const dir = fs.mkdtempSync(`${os.tmpdir()}/mesh-cp-`);
  const path = `${dir}/log`;
  return {
    log: createLevelLog({ path, ...options }),
    reopen: () => createLevelLog({ path, ...options }),
    cleanup: () => fs.promises.rm(dir, { recursive: true, force: true }),
  };
});

eventLogContract('postgres', async (options) => {
  const database = await createTestDatabase();
  const make = () => createPgLog({ connection: { ...TEST_PG, database: database.name }, ...options });
  return { log: make(), reopen: make, cleanup: () => database.drop() };
});
