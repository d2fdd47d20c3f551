import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startTestPlane } from '../helpers/control-plane.js';
import { expectErrorShape } from '../helpers/error-shape.js';
import { measureLoopDelay, measureRssGrowth } from '../helpers/loop-delay.js';

// Bodies nested deeper, or holding more values, than any resource: each is refused (400 naming
// the bound) before anything is built from it, and none holds the event loop for long.

const yaml = { 'content-type': 'application/yaml' };
const json = { 'content-type': 'application/json' };
/** The longest the loop may be held by one such request (the bound is one request's cost). */
const LOOP_MS = 100;
const MIB = 1024 * 1024;

/**
 * The longest event-loop stall while `work` runs, the least of up to `tries` runs. On a loaded
 * machine the OS alone holds a process for tens of ms now and then (an idle loop showed 140 ms at
 * a load of 14 on 2 cores); a stall that the work causes shows in every run.
 */
async function stallOf<T>(work: () => Promise<T>, tries = 3): Promise<{ result: T; maxMs: number }> {
  let least = await measureLoopDelay(work);
  for (let i = 1; i < tries && least.maxMs >= LOOP_MS; i++) {
    const next = await measureLoopDelay(work);
    if (next.maxMs < least.maxMs) least = next;
  }
  return least;
}

describe('deep and large bodies are refused before they are built', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startTestPlane();
    // The YAML library loads on the first YAML body, once per process: not a cost of the bodies here.
    await cp.app.inject({
      method: 'PUT',
      url: '/meshes/warm',
      headers: yaml,
      payload: 'type: Mesh\nname: warm\n',
    });
  });
  afterAll(async () => {
    await cp.close();
  });

  /** PUTs `payload`; the answer, and the longest loop stall while it was handled. */
  const put = async (url: string, headers: Record<string, string>, payload: string) => {
    const { result, maxMs } = await stallOf(() => cp.app.inject({ method: 'PUT', url, headers, payload }));
    return { res: result, maxMs };
  };

  /** Expects a 400 in our shape whose details are `details`, and nothing stored at `url`. */
  async function expectRefused(
    url: string,
    headers: Record<string, string>,
    payload: string,
    details: string | RegExp,
  ): Promise<number> {
    const { res, maxMs } = await put(url, headers, payload);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(400);
    const body = res.json();
    expectErrorShape(body);
    expect(body.title).toBe('Invalid request body');
    if (typeof details === 'string') expect(body.details).toBe(details);
    else expect(body.details).toMatch(details);
    expect((await cp.app.inject({ method: 'GET', url })).statusCode).toBe(404);
    return maxMs;
  }

  it('YAML: 1 MB of "[" is 400 naming the depth bound, without holding the event loop', async () => {
    const body = '['.repeat(MIB - 100);
    const maxMs = await expectRefused(
      '/meshes/deep',
      yaml,
      body,
      'the YAML body is too deep at line 1, column 65: it nests more than 64 levels of arrays and objects; ' +
        'no resource comes near this: check what generated the body',
    );
    expect(maxMs).toBeLessThan(LOOP_MS);
  }, 60_000);

  it('YAML: 1,000 levels of flow and of block collections are 400 naming the depth bound', async () => {
    const bodies = [
      `type: Mesh\nname: deep\nx: ${'['.repeat(1000)}${']'.repeat(1000)}\n`,
      `type: Mesh\nname: deep\nx: ${'{a: '.repeat(1000)}b${'}'.repeat(1000)}\n`,
      `type: Mesh\nname: deep\nx:\n${'- '.repeat(1000)}b\n`,
      `type: Mesh\nname: deep\nx:\n${'? '.repeat(1000)}b\n`,
      `type: Mesh\nname: deep\n${Array.from({ length: 1000 }, (_, i) => `${' '.repeat(i)}a:`).join('\n')} b\n`,
    ];
    for (const body of bodies) {
      await expectRefused(
        '/meshes/deep',
        yaml,
        body,
        /^the YAML body is too deep at line \d+, column \d+: it nests more than 64 levels of arrays and objects;/,
      );
    }
  }, 60_000);

  it('YAML: four bodies of 300,000 levels at once are each 400, the loop stays free, the server lives', async () => {
    const body = `type: Mesh\nname: deep\nx: ${'['.repeat(300_000)}${']'.repeat(300_000)}\n`;
    const {
      result: { result, maxMs },
      growth,
    } = await measureRssGrowth(() =>
      stallOf(() =>
        Promise.all(
          Array.from({ length: 4 }, () =>
            cp.app.inject({ method: 'PUT', url: '/meshes/deep', headers: yaml, payload: body }),
          ),
        ),
      ),
    );
    // The four bodies are 2.4 MB in all; building them ran the process out of memory.
    expect(growth).toBeLessThan(128 * 1024 * 1024);
    for (const res of result) {
      expect(res.statusCode).toBe(400);
      expect(res.json().details).toMatch(/^the YAML body is too deep at line 3, column 67: /);
    }
    expect(maxMs).toBeLessThan(LOOP_MS);
    expect((await cp.app.inject({ method: 'GET', url: '/' })).statusCode).toBe(200);
  }, 60_000);

  it('YAML: a sequence of 300,000 scalars is 400 naming the node bound, without holding the loop', async () => {
    const body = `type: Mesh\nname: wide\nx: [${'a, '.repeat(300_000)}a]\n`;
    const maxMs = await expectRefused(
      '/meshes/wide',
      yaml,
      body,
      /^the YAML body is too large at line 3, column \d+: it has more than 50000 keys and values \(each key, scalar, array and object counts one\);/,
    );
    expect(maxMs).toBeLessThan(LOOP_MS);
  }, 60_000);

  it('YAML: a mapping of 30,000 keys is refused without a stall (no key compared with every other)', async () => {
    const keys = Array.from({ length: 30_000 }, (_, i) => `  k${i}: v`).join('\n');
    const body = `type: Mesh\nname: keys\nx:\n${keys}\n`;
    const maxMs = await expectRefused(
      '/meshes/keys',
      yaml,
      body,
      /^the YAML body is too large at line \d+, column \d+: it has more than 50000 keys and values/,
    );
    expect(maxMs).toBeLessThan(LOOP_MS);
  }, 120_000);

  it('YAML: 120,000 empty items (a "-" alone on each line) are 400 naming the node bound', async () => {
    const maxMs = await expectRefused(
      '/meshes/empty',
      yaml,
      `type: Mesh\nname: empty\nx:\n${'-\n'.repeat(120_000)}`,
      /^the YAML body is too large at line \d+, column \d+: it has more than 50000 keys and values/,
    );
    expect(maxMs).toBeLessThan(LOOP_MS);
  }, 60_000);

  it('YAML: 1 MB of line breaks is 400 naming the token bound, without holding the loop', async () => {
    const maxMs = await expectRefused(
      '/meshes/blank',
      yaml,
      `type: Mesh\nname: blank\n${'\n'.repeat(MIB - 100)}`,
      /^the YAML body is too large at line \d+, column 1: it has more than 250000 YAML tokens \(scalars, indicators, spaces, line breaks and comments\);/,
    );
    expect(maxMs).toBeLessThan(LOOP_MS);
  }, 60_000);

  it('YAML: duplicate keys are still 400, where the second is', async () => {
    const { res } = await put('/meshes/twice', yaml, 'type: Mesh\nname: twice\nname: twice\n');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      title: 'Invalid request body',
      details: 'invalid YAML: Map keys must be unique at line 3, column 1:',
    });
    const flow = await put('/meshes/twice', yaml, 'type: Mesh\nname: twice\nx: {a: 1, b: 2, a: 3}\n');
    expect(flow.res.json().details).toBe('invalid YAML: Map keys must be unique at line 3, column 17:');
  });

  it('YAML: an alias chain nested past the bound is 400', async () => {
    // Each anchor nests the one before 40 levels deeper: 2 aliases, 80 levels.
    const anchors = Array.from(
      { length: 2 },
      (_, i) => `a${i + 1}: &a${i + 1} ${'['.repeat(40)}*a${i}${']'.repeat(40)}`,
    ).join('\n');
    const body = `type: Mesh\nname: chain\na0: &a0 [x]\n${anchors}\n`;
    await expectRefused(
      '/meshes/chain',
      yaml,
      body,
      'the YAML body is too deep: through aliases it nests more than 64 levels of arrays and objects',
    );
  });

  it('JSON: 1 MB of "[" is 400 naming the depth bound, without holding the loop', async () => {
    const open = '['.repeat(MIB / 2 - 100);
    for (const body of [open, `${open}${']'.repeat(MIB / 2 - 100)}`]) {
      const maxMs = await expectRefused(
        '/meshes/deep',
        json,
        body,
        'the JSON body is too deep at line 1, column 65: it nests more than 64 levels of arrays and objects; ' +
          'no resource comes near this: check what generated the body',
      );
      expect(maxMs).toBeLessThan(LOOP_MS);
    }
  }, 60_000);

  it('JSON: deep values in a token request are 400 too, before validation', async () => {
    const deep = `${'['.repeat(200_000)}"x"${']'.repeat(200_000)}`;
    const { result, maxMs } = await stallOf(() =>
      cp.app.inject({
        method: 'POST',
        url: '/tokens/user',
        headers: json,
        payload: `{"name": "u", "groups": ${deep}}`,
      }),
    );
    expect(result.statusCode).toBe(400);
    expect(result.json().details).toMatch(/^the JSON body is too deep at line 1, column 88: /);
    expect(maxMs).toBeLessThan(LOOP_MS);
  }, 60_000);

  it('JSON: 200,000 values are 400 naming the node bound', async () => {
    const body = JSON.stringify({ type: 'Mesh', name: 'wide', x: Array(200_000).fill(0) });
    await expectRefused(
      '/meshes/wide',
      json,
      body,
      /^the JSON body is too large at line 1, column \d+: it has more than 50000 keys and values/,
    );
  });

  it('bodies within the bounds still work: 60 levels are refused by the resource check, not the parser', async () => {
    const nested = `${'['.repeat(60)}${']'.repeat(60)}`;
    for (const [headers, payload] of [
      [json, `{"type": "Mesh", "name": "ok", "x": ${nested}}`],
      [yaml, `type: Mesh\nname: ok\nx: ${nested}\n`],
    ] as const) {
      const { res } = await put('/meshes/ok', headers, payload);
      expect(res.statusCode).toBe(400);
      expect(res.json().title).toBe('Resource is not valid');
      expect(res.json().causes[0].message).toBe('must not nest deeper than 32 levels');
    }
  });
});

describe('__proto__ and constructor.prototype keys in YAML bodies are refused as in JSON', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startTestPlane();
  });
  afterAll(async () => {
    await cp.close();
  });

  const refusal = {
    title: 'Invalid request body',
    details: 'invalid YAML: Object contains forbidden prototype property',
  };

  it('a top-level __proto__ is 400 and stores nothing (it was inherited as fields)', async () => {
    const res = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/proto',
      headers: yaml,
      payload: 'type: Mesh\nname: proto\n__proto__:\n  mtls:\n    enabledBackend: ca-1\n',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(refusal);
    expect((await cp.app.inject({ method: 'GET', url: '/meshes/proto' })).statusCode).toBe(404);
  });

  it('a __proto__ tag is 400 (it was dropped)', async () => {
    const dataplane = [
      'type: Dataplane',
      'mesh: default',
      'name: dp-proto',
      'networking:',
      '  address: 10.0.0.1',
      '  inbound:',
      '  - port: 8080',
      '    tags:',
      '      kuma.io/service: web',
      '      __proto__: x',
      '',
    ].join('\n');
    const res = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/default/dataplanes/dp-proto',
      headers: yaml,
      payload: dataplane,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(refusal);
  });

  it('quoted, aliased and constructor.prototype forms are 400 too', async () => {
    for (const payload of [
      'type: Mesh\nname: proto\n"__proto__": {}\n',
      'type: Mesh\nname: proto\nk: &k __proto__\nx: {*k : 1}\n',
      'type: Mesh\nname: proto\nconstructor:\n  prototype: {}\n',
    ]) {
      const res = await cp.app.inject({ method: 'PUT', url: '/meshes/proto', headers: yaml, payload });
      expect(res.statusCode, payload).toBe(400);
      expect(res.json(), payload).toEqual(refusal);
    }
  });

  it('the same body as JSON gets the same answer', async () => {
    const res = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/proto',
      headers: json,
      payload: '{"type": "Mesh", "name": "proto", "constructor": {"prototype": {}}}',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().details).toBe('invalid JSON: Object contains forbidden prototype property');
  });
});
