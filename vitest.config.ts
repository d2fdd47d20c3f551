import { defineConfig } from 'vitest/config';

/** Tests of modules in-process, with no servers, ports or child processes of their own. */
const UNIT = ['test/unit/**/*.test.ts', 'test/conformance/**/*.test.ts'];

/**
 * Files that assert how long the event loop of their own process was held (under 100 ms): they run
 * last and one at a time, so that no other test file or its child processes compete with them for
 * the two cores.
 */
const LOOP_STALL = [
  'test/fuzz/sync.fuzz.test.ts',
  'test/fuzz/xds.fuzz.test.ts',
  'test/integration/api-errors-say-what-to-do.test.ts',
  'test/integration/deep-bodies.test.ts',
  'test/integration/sync-unauthenticated.test.ts',
  'test/integration/xds-hostile-requests.test.ts',
  'test/integration/xds-resource-names.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // vitest's default on this 2-core machine is one worker (cores - 1): the suite then runs one file
    // at a time, though most of an integration or e2e file's time is spent waiting on servers, child
    // processes and PostgreSQL. Two keep both cores busy.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'loop-stall',
          include: LOOP_STALL,
          // One file at a time, as before, once every other file is done (vitest runs the files of a
          // project without file parallelism after the rest).
          fileParallelism: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'unit',
          include: UNIT,
          // One process and module graph per worker instead of one per file, which costs ~0.5 s of
          // process start and imports each. These files start no servers and leave no process-wide
          // state behind (fake timers are put back after each test): they pass in either mode.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'processes',
          include: ['test/**/*.test.ts'],
          exclude: [...UNIT, ...LOOP_STALL],
          // Each file in a process of its own: gRPC's xDS resolver and its bootstrap, servers and
          // signal handlers are process-wide.
          isolate: true,
        },
      },
    ],
  },
});
