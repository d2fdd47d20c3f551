import { describe, expect, it } from 'vitest';
import { defaultMeshSpec } from '../../src/runtime/default-mesh.js';
import { startTestPlane, testConfig } from '../helpers/control-plane.js';
import { meshCp } from '../helpers/process.js';

describe('defaults.mesh: the default mesh made at first start', () => {
  it('gives the default mesh its settings, from YAML with or without type and name', async () => {
    const cp = await startTestPlane({
      MESH_DEFAULTS_MESH: 'type: Mesh\nname: default\nrouting:\n  localityAwareLoadBalancing: true\n',
    });
    try {
      const res = await cp.app.inject({ method: 'GET', url: '/meshes/default' });
      expect(res.statusCode).toBe(200);
      expect(res.json().routing).toEqual({ localityAwareLoadBalancing: true });
    } finally {
      await cp.close();
    }
    expect(
      defaultMeshSpec(
        testConfig({ MESH_DEFAULTS_MESH: '{"routing": {"localityAwareLoadBalancing": true}}' }),
      ),
    ).toEqual({ routing: { localityAwareLoadBalancing: true } });
    expect(defaultMeshSpec(testConfig())).toEqual({});
  });

  it('refuses what is not a Mesh named default, naming the key, its variable and the field', () => {
    const refusal = (text: string): string => {
      try {
        defaultMeshSpec(testConfig({ MESH_DEFAULTS_MESH: text }));
      } catch (err) {
        return (err as Error).message;
      }
      throw new Error(`accepted ${text}`);
    };
    expect(refusal('routing: {zoneEgress: "yes"}')).toMatch(
      /^defaults\.mesh \(MESH_DEFAULTS_MESH\): not a valid Mesh named default: routing\.zoneEgress: /,
    );
    expect(refusal('name: other')).toMatch(/not a valid Mesh named default: name: must be equal to/);
    expect(refusal('[1, 2]')).toBe(
      'defaults.mesh (MESH_DEFAULTS_MESH): must be a Mesh, a mapping such as {"mtls": {...}}',
    );
    expect(refusal('a: [')).toMatch(/^defaults\.mesh \(MESH_DEFAULTS_MESH\): not YAML or JSON: /);
    // Bounded before anything is built: 1,000 levels overflowed the stack.
    expect(refusal(`mtls: ${'['.repeat(1000)}${']'.repeat(1000)}`)).toBe(
      'defaults.mesh (MESH_DEFAULTS_MESH): too large or too deep: it nests more than 64 levels of arrays and objects',
    );
    expect(refusal('mtls: {}\n---\nmtls: {}\n')).toBe(
      'defaults.mesh (MESH_DEFAULTS_MESH): not YAML or JSON: holds several YAML documents, a Mesh is one',
    );
  });

  it('a bad one stops `mesh-cp run` with exit 2 before anything is written', async () => {
    const result = await meshCp(['run'], {
      MESH_STORE_TYPE: 'memory',
      MESH_API_SERVER_PORT: '0',
      MESH_API_SERVER_HTTPS_ENABLED: 'false',
      MESH_DIAGNOSTICS_PORT: '0',
      MESH_XDS_SERVER_GRPC_PORT: '0',
      MESH_DEFAULTS_MESH: 'routing: {zoneEgress: "yes"}',
    });
    expect(result.code).toBe(2);
    expect(result.stdout).toContain('defaults.mesh (MESH_DEFAULTS_MESH): not a valid Mesh named default');
  }, 15_000);
});
