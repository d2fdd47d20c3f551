import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  resourceOf,
  type ResourceDescriptor,
  type ResourceOf,
  type SpecOf,
} from '../../../src/resources/descriptor.js';
import { faultInjection } from '../../../src/resources/kinds/fault-injection.js';
import { meshGateway } from '../../../src/resources/kinds/mesh-gateway.js';
import { registry } from '../../../src/resources/registry.js';

// The type assertions here are checked by tsc (`npm run lint`); vitest runs the values.

const selectors = [{ match: { 'mesh.io/service': '*' } }];

/** A FaultInjection as the log stores it (wire form). */
const stored = {
  type: 'FaultInjection',
  mesh: 'default',
  name: 'slow-web',
  creationTime: '2026-01-01T00:00:00Z',
  modificationTime: '2026-01-01T00:00:00Z',
  sources: selectors,
  destinations: [{ match: { 'mesh.io/service': 'web' } }],
  conf: { abort: { percentage: 10, httpStatus: 503 } },
};

describe('typed resource specs', () => {
  it('a kind carries the type its spec schema parses to', () => {
    type FaultSpec = SpecOf<typeof faultInjection>;
    expectTypeOf<FaultSpec>().toHaveProperty('sources');
    expectTypeOf<FaultSpec>().toHaveProperty('destinations');
    expectTypeOf<FaultSpec['conf']['abort']>().toEqualTypeOf<
      { percentage: number; httpStatus: number } | undefined
    >();
    expectTypeOf<FaultSpec['conf']['delay']>().toEqualTypeOf<
      { percentage: number; value: string } | undefined
    >();
    expectTypeOf<SpecOf<typeof meshGateway>['selectors'][number]['match']>().toEqualTypeOf<
      Record<string, string>
    >();
  });

  it('what the schema parses is read without casts', () => {
    const spec = faultInjection.spec.parse({
      sources: selectors,
      destinations: [{ match: { 'mesh.io/service': '*', 'mesh.io/protocol': 'grpc' } }],
      conf: { delay: { percentage: 50, value: '5s' } },
    });
    expectTypeOf(spec).toEqualTypeOf<SpecOf<typeof faultInjection>>();
    expect(spec.conf.delay?.value).toBe('5s');
    expect(spec.sources[0].match['mesh.io/service']).toBe('*');
  });

  it('the registry holds kinds of every spec type under the erased descriptor', () => {
    expectTypeOf(faultInjection).toExtend<ResourceDescriptor>();
    expectTypeOf(registry.get('FaultInjection')).toEqualTypeOf<ResourceDescriptor>();
    expect(registry.get('FaultInjection')).toBe(faultInjection);
  });

  it('resourceOf reads a stored resource of the kind with its spec typed', () => {
    const read = resourceOf(faultInjection, stored);
    expectTypeOf(read).toEqualTypeOf<ResourceOf<typeof faultInjection>>();
    expectTypeOf(read.conf.abort?.httpStatus).toEqualTypeOf<number | undefined>();
    expectTypeOf(read.name).toEqualTypeOf<string>();
    expect(read.conf.abort?.httpStatus).toBe(503);
    expect(read.destinations[0].match['mesh.io/service']).toBe('web');
  });

  it('resourceOf refuses a resource of another kind: no schema vouches for it', () => {
    expect(() => resourceOf(meshGateway, stored)).toThrow('a FaultInjection read as a MeshGateway');
  });
});
