import { accessSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type protobufjs from 'protobufjs';
import { protobuf } from './protobuf-lib.js';

/**
 * The package's root: two folders up from this module, in the bundle (`dist/bin`) and in the
 * sources (`src/xds`, where the tests run) alike.
 */
const PACKAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const THIRD_PARTY = join(PACKAGE_ROOT, 'proto', 'third_party');

/** One include directory per vendored tree (proto/third_party/README.md). */
const INCLUDE_DIRS = ['envoy-api', 'xds', 'googleapis', 'protoc-gen-validate'].map((d) =>
  join(THIRD_PARTY, d),
);

/** The files whose closure is loaded: every type the server encodes or serves. */
const ROOT_FILES = [
  'envoy/service/discovery/v3/ads.proto',
  'envoy/config/listener/v3/listener.proto',
  'envoy/config/route/v3/route.proto',
  'envoy/config/cluster/v3/cluster.proto',
  'envoy/config/endpoint/v3/endpoint.proto',
  'envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto',
  'envoy/extensions/filters/http/router/v3/router.proto',
  'envoy/extensions/filters/http/fault/v3/fault.proto',
  'envoy/extensions/filters/http/rbac/v3/rbac.proto',
  'envoy/type/v3/percent.proto',
  'google/rpc/status.proto',
];

let root: protobufjs.Root | undefined;

/**
 * The parsed protos as protobufjs JSON, written by `npm run build` ({@link parseEnvoyProtos}, then
 * `toJSON`): building the root from it takes ~60% of the CPU of parsing the 73 files.
 */
export const ENVOY_PROTOS_JSON = join(PACKAGE_ROOT, 'dist', 'envoy-protos.json');

/**
 * The protobufjs root of the Envoy protos, built on first use: nothing is loaded before `ready`;
 * `mesh-cp run` then loads it in the background ({@link warmEnvoyProtos}), else the first proxy to
 * talk to the xDS server does. From the build's JSON ({@link ENVOY_PROTOS_JSON}) when there is one,
 * else from the .proto files (a checkout not built yet). Field names keep their proto spelling
 * (`keepCase`: `api_listener`, not `apiListener`), as Envoy's JSON dumps do.
 */
export function envoyRoot(): protobufjs.Root {
  root ??= builtRoot(ENVOY_PROTOS_JSON) ?? parseEnvoyProtos();
  return root;
}

/**
 * The root built from the JSON at `path`; undefined when there is none or it cannot be read as one
 * (a damaged file): it only saves work, and the .proto files it was made from are there to parse.
 */
export function builtRoot(path: string): protobufjs.Root | undefined {
  try {
    const json = JSON.parse(readFileSync(path, 'utf8')) as protobufjs.INamespace;
    // No `resolveAll`: the build resolved every type of this JSON, and a type resolves its own
    // fields when it is first set up to encode or decode (~40% of the CPU of building the root).
    return protobuf().Root.fromJSON(json);
  } catch {
    return undefined;
  }
}

/** The Envoy protos parsed from their .proto files (~150 ms for 73 files). */
export function parseEnvoyProtos(): protobufjs.Root {
  registerDescriptor();
  const r = new (protobuf().Root)();
  r.resolvePath = (_origin, target) => {
    if (isAbsolute(target)) return target;
    for (const dir of INCLUDE_DIRS) {
      const path = join(dir, target);
      try {
        accessSync(path);
        return path;
      } catch {
        // not in this tree
      }
    }
    return target;
  };
  r.loadSync(ROOT_FILES, { keepCase: true });
  r.resolveAll();
  return r;
}

const TYPES = new Map<string, protobufjs.Type>();

/**
 * A message type of the Envoy root by its full name (`envoy.config.listener.v3.Listener`), looked up
 * once: protobufjs walks the namespaces on each lookup, which was a tenth of the server's CPU while
 * 1,000 proxies ACKed a push.
 */
export function envoyType(name: string): protobufjs.Type {
  let type = TYPES.get(name);
  if (!type) {
    type = envoyRoot().lookupType(name);
    TYPES.set(name, type);
  }
  return type;
}

/**
 * `google/protobuf/descriptor.proto` (imported by the validate and udpa annotations, which extend
 * FieldOptions) is not among protobufjs' bundled types unless @grpc/proto-loader registered it;
 * register it from protobufjs' own copy so loading does not depend on import order.
 */
function registerDescriptor(): void {
  const pb = protobuf();
  const common = pb.common as unknown as Record<string, unknown> & typeof pb.common;
  if ('google/protobuf/descriptor.proto' in common) return;
  const require = createRequire(import.meta.url);
  const json = require('protobufjs/google/protobuf/descriptor.json') as {
    nested: { google: { nested: { protobuf: { nested: Record<string, unknown> } } } };
  };
  pb.common(
    'descriptor',
    json.nested.google.nested.protobuf.nested as protobufjs.INamespace['nested'] & object,
  );
}

/** The types every first request and answer reads or writes: the node, a NACK's status, the resources. */
const FIRST_TYPES = [
  'envoy.config.core.v3.Node',
  'google.rpc.Status',
  'envoy.service.discovery.v3.DiscoveryResponse',
  'envoy.config.listener.v3.Listener',
  'envoy.config.route.v3.RouteConfiguration',
  'envoy.config.cluster.v3.Cluster',
  'envoy.config.endpoint.v3.ClusterLoadAssignment',
];

/**
 * Parses the Envoy protos and sets up the types of a first request now (the first proxy would
 * otherwise pay it: 0.2–0.7 s of CPU in the turn that reads its request, during a reconnect storm
 * after a restart). Called in a later turn once the server is ready; a no-op when they are loaded.
 */
export function warmEnvoyProtos(): void {
  for (const name of FIRST_TYPES) envoyType(name).setup();
}
