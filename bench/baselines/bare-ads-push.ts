// The xds baseline: a bare @grpc/grpc-js server on the same ADS service definition that, when a
// stream asks type `trigger`, writes one pre-encoded response (the bytes mesh-cp served, read from
// argv[2]) to every other open stream. No config, no comparison, no state: the transport's floor.
// With `--answer` (the ads10k storm's baseline) it instead answers the first request of each type
// on a stream with the bytes mesh-cp served for that type (argv[2] holds one response per type) and
// ignores the rest (ACKs): what a server does for a reconnect storm with nothing to compute.
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { ADS_SERVICE, type DiscoveryRequest, type DiscoveryResponse } from '../../src/xds/ads-protocol.js';

interface Stored {
  type_url: string;
  resources: Array<{ type_url: string; value: string }>;
}

const stored = JSON.parse(readFileSync(process.argv[2] as string, 'utf8')) as
  Stored | { responses: Stored[] };
const decoded = (r: Stored) => ({
  type_url: r.type_url,
  resources: r.resources.map((a) => ({ type_url: a.type_url, value: Buffer.from(a.value, 'base64') })),
});
const byType = new Map(
  ('responses' in stored ? stored.responses : [stored]).map((r) => [r.type_url, decoded(r)]),
);
const answer = process.argv.includes('--answer');
const response = [...byType.values()][0] as ReturnType<typeof decoded>;
const streams = new Set<grpc.ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>>();
let nonce = 0;
// Without channelz, as mesh-cp's ADS server: the floor of the same transport, configured alike.
const server = new grpc.Server({ 'grpc.enable_channelz': 0 });
server.addService(ADS_SERVICE, {
  StreamAggregatedResources: (call: grpc.ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>) => {
    call.on('data', (req: DiscoveryRequest) => {
      if (answer) {
        const r = req.response_nonce === '' ? byType.get(req.type_url) : undefined;
        if (r)
          call.write({
            version_info: '1',
            resources: r.resources,
            type_url: r.type_url,
            nonce: String(++nonce),
          });
      } else if (req.type_url === 'trigger') {
        nonce++;
        for (const s of streams)
          s.write({
            version_info: String(nonce),
            resources: response.resources,
            type_url: response.type_url,
            nonce: String(nonce),
          });
      } else if (req.response_nonce === '') streams.add(call);
    });
    call.on('end', () => {
      streams.delete(call);
      call.end();
    });
    call.on('error', () => streams.delete(call));
  },
});
server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
  if (err) throw err;
  process.stdout.write(`${JSON.stringify({ msg: 'ready', port })}\n`);
});
