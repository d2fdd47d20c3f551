// The xds baseline: a bare @grpc/grpc-js server on the same ADS service definition that, when a
// stream asks type `trigger`, writes one pre-encoded response (the bytes mesh-cp served, read from
// argv[2]) to every other open stream. No config, no comparison, no state: the transport's floor.
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { ADS_SERVICE, type DiscoveryRequest, type DiscoveryResponse } from '../../src/xds/ads-protocol.js';

const response = JSON.parse(readFileSync(process.argv[2] as string, 'utf8')) as {
  type_url: string;
  resources: Array<{ type_url: string; value: string }>;
};
const resources = response.resources.map((r) => ({
  type_url: r.type_url,
  value: Buffer.from(r.value, 'base64'),
}));
const streams = new Set<grpc.ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>>();
let nonce = 0;
// Without channelz, as mesh-cp's ADS server: the floor of the same transport, configured alike.
const server = new grpc.Server({ 'grpc.enable_channelz': 0 });
server.addService(ADS_SERVICE, {
  StreamAggregatedResources: (call: grpc.ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>) => {
    call.on('data', (req: DiscoveryRequest) => {
      if (req.type_url === 'trigger') {
        nonce++;
        for (const s of streams)
          s.write({
            version_info: String(nonce),
            resources,
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
