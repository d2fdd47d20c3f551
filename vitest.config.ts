import { defineConfig } from 'vitest/config';

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

/**
 * Files that need a process of their own: they run the @grpc/grpc-js-xds client in-process, whose
 * resolver and bootstrap (`GRPC_XDS_BOOTSTRAP_CONFIG`) are process-wide, so a file run after
 * another in the same process would find the other's client config.
 */
const OWN_PROCESS = [
  'test/integration/ads-grpc-js-xds.test.ts',
  'test/integration/xds-bootstrap.test.ts',
  'test/integration/xds-client-policies.test.ts',
  'test/integration/xds-inbound-faults.test.ts',
  'test/integration/xds-mesh-source.test.ts',
  'test/integration/xds-server-rbac.test.ts',
];

/**
 * Node reads and parses every certificate of `NODE_EXTRA_CA_CERTS` when a process starts (~40 ms of
 * CPU for Debian's bundle of ~140), and the suite starts ~500 node processes (meshctl, mesh-cp, the
 * example clients) that inherit it. None of them needs it: they talk only to servers on 127.0.0.1,
 * whose CAs the tests give them. Dropped here, before any worker or child process is started.
 */
delete process.env.NODE_EXTRA_CA_CERTS;

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // vitest's default on this 2-core machine is one worker (cores - 1): the suite then runs one file
    // at a time, though most of an integration or e2e file's time is spent waiting on servers, child
    // processes and PostgreSQL. With two, a core still idled whenever both files waited at once
    // (~50 core-seconds a run, a fifth of the wall time); three keep both cores busy (measured: 3 min
    // 27 s to 3 min 41 s on a quiet machine, against 3 min 54 s to 4 min 7 s with two).
    maxWorkers: 3,
    projects: [
      {
        extends: true,
        test: {
          name: 'loop-stall',
          include: LOOP_STALL,
          // One file at a time, once every other file is done (a later group), all in one process:
          // a process per file cost each file ~1 s of start and imports, while the other core
          // idled. Each file closes what it starts, as in `shared`.
          fileParallelism: false,
          sequence: { groupOrder: 1 },
          isolate: false,
          setupFiles: ['test/helpers/per-file.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: [...LOOP_STALL, ...OWN_PROCESS],
          // The files of a worker share one process and module graph: an in-process control plane's
          // modules are imported once per worker instead of once per file (~1 s of CPU each). Each
          // file closes what it starts; `per-file.ts` gives each its own kept signing keys. The unit
          // files (test/unit, test/conformance: modules in-process, no servers) are here too, not a
          // project of their own, whose two workers each cost a start and a module graph, and which
          // ran after this one: here they also fill the time both workers wait on servers and child
          // processes.
          isolate: false,
          setupFiles: ['test/helpers/per-file.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'processes',
          include: OWN_PROCESS,
          isolate: true,
        },
      },
    ],
  },
});
