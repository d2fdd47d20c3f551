import { afterEach, describe, expect, it } from 'vitest';

import type { Subscription } from '../../src/status/status-store.js';
import { tempDir } from '../helpers/control-plane.js';
import { startGlobal, startZone, tp, zoneToken } from '../helpers/multizone.js';
import { createTestDatabase, pgStoreEnv } from '../helpers/postgres.js';
import type { TestDatabase } from '../helpers/postgres.js';
import { eventually } from '../helpers/eventually.js';

/** Waits until `check` holds (polling), for up to 20 s: sync and leader changes here take a few seconds at most. */
const until = (check: () => boolean | Promise<boolean>): Promise<true> => eventually(check, 20_000);

describe('a zone of several instances on one PostgreSQL log', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('syncs with Global from one instance only (the leader), and from another once that one stops', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const global = await startGlobal(dir.path);
    cleanups.push(() => global.close());
    const db: TestDatabase = await createTestDatabase();
    cleanups.push(() => db.drop());
    const token = await zoneToken(global, 'east');
    const pg = pgStoreEnv(db.name);
    const first = await startZone(global, dir.path, 'east', token, pg);
    let firstOpen = true;
    cleanups.push(() => (firstOpen ? first.close() : undefined));
    const second = await startZone(global, dir.path, 'east', token, pg);
    cleanups.push(() => second.close());
    const subscriptions = (): Subscription[] => global.status.zoneInsight('east')?.subscriptions ?? [];
    const open = () => subscriptions().filter((s) => s.disconnectTime === undefined);

    await until(() => first.multizone?.link?.().connected === true && open().length === 1);
    expect(second.multizone?.link?.()).toMatchObject({
      connected: false,
      lastError: expect.stringContaining('another instance of this zone'),
    });
    // Global's resources reach both instances (the leader writes them into the shared log).
    expect(
      (
        await global.app.inject({
          method: 'PUT',
          url: '/meshes/default/traffic-permissions/tp-1',
          payload: tp('tp-1'),
        })
      ).statusCode,
    ).toBe(201);
    for (const zone of [first, second]) {
      await until(
        async () =>
          (await zone.app.inject({ method: 'GET', url: '/meshes/default/traffic-permissions/tp-1' }))
            .statusCode === 200,
      );
    }
    // Two instances dialling would replace each other's connection on Global: still one session.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(subscriptions()).toHaveLength(1);

    await first.close();
    firstOpen = false;
    await until(() => second.multizone?.link?.().connected === true && open().length === 1);
    const last = subscriptions()[subscriptions().length - 1];
    // The zone's cursor is in the shared log: the new leader resumes where the old one stopped.
    expect(last).toMatchObject({ sync: { globalToZone: { start: 'resume' } } });
    expect(subscriptions()).toHaveLength(2);
  }, 60_000);
});
