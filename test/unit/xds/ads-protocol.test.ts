import { describe, expect, it } from 'vitest';
import type * as grpc from '@grpc/grpc-js';
import { ADS_SERVICE, encodeResponse } from '../../../src/xds/ads-protocol.js';
import { loadAdsPackage } from '../../helpers/xds.js';

describe('ADS_SERVICE', () => {
  it('has the path and streaming flags proto-loader derives from ads.proto', () => {
    const pkg = loadAdsPackage() as unknown as {
      envoy: {
        service: { discovery: { v3: { AggregatedDiscoveryService: { service: grpc.ServiceDefinition } } } };
      };
    };
    const reference = pkg.envoy.service.discovery.v3.AggregatedDiscoveryService.service;
    const pick = (d: grpc.MethodDefinition<unknown, unknown>) => [d.path, d.requestStream, d.responseStream];
    expect(pick(ADS_SERVICE.StreamAggregatedResources!)).toEqual(pick(reference.StreamAggregatedResources!));
  });

  it('reads the node of a request: metadata as plain JSON, locality and user agent', () => {
    const pkg = loadAdsPackage() as unknown as {
      envoy: {
        service: { discovery: { v3: { AggregatedDiscoveryService: { service: grpc.ServiceDefinition } } } };
      };
    };
    const reference =
      pkg.envoy.service.discovery.v3.AggregatedDiscoveryService.service.StreamAggregatedResources!;
    const bytes = reference.requestSerialize({
      type_url: 't',
      resource_names: ['a', 'b'],
      node: {
        id: 'default.web-1',
        locality: { zone: 'z1' },
        user_agent_name: 'grpc-node-js',
        user_agent_version: '1.14.1',
        metadata: {
          fields: {
            'dataplane.token': { stringValue: 'tok' },
            nested: {
              structValue: {
                fields: { n: { numberValue: 2 }, l: { listValue: { values: [{ boolValue: true }] } } },
              },
            },
          },
        },
      },
    });
    const req = ADS_SERVICE.StreamAggregatedResources!.requestDeserialize(bytes);
    expect(req).toEqual({
      version_info: '',
      type_url: 't',
      resource_names: ['a', 'b'],
      response_nonce: '',
      error_detail: undefined,
      node: {
        id: 'default.web-1',
        cluster: '',
        locality: { zone: 'z1' },
        user_agent_name: 'grpc-node-js',
        user_agent_version: '1.14.1',
        client_features: [],
        metadata: { 'dataplane.token': 'tok', nested: { n: 2, l: [true] } },
      },
    });
  });
});

describe('encodeResponse', () => {
  it('writes the bytes protobufjs writes for the same DiscoveryResponse, cached records included', () => {
    const pkg = loadAdsPackage() as unknown as {
      envoy: {
        service: { discovery: { v3: { AggregatedDiscoveryService: { service: grpc.ServiceDefinition } } } };
      };
    };
    const reference =
      pkg.envoy.service.discovery.v3.AggregatedDiscoveryService.service.StreamAggregatedResources!;
    // A value over 127 bytes needs a two-byte length; the same value twice reuses its record.
    const big = Buffer.alloc(300, 7);
    const small = Buffer.from([1, 2, 3]);
    const res = {
      version_info: '12345',
      resources: [
        { type_url: 'type.googleapis.com/envoy.config.listener.v3.Listener', value: big },
        { type_url: 'type.googleapis.com/envoy.config.listener.v3.Listener', value: small },
      ],
      type_url: 'type.googleapis.com/envoy.config.listener.v3.Listener',
      nonce: '7',
    };
    // A version of 200 bytes (two-byte length, multi-byte characters) and a long nonce.
    const long = { ...res, version_info: 'é'.repeat(100), nonce: '9'.repeat(130) };
    for (const r of [res, { ...res, nonce: '8', version_info: '' }, { ...res, resources: [] }, long]) {
      const ours = encodeResponse(r);
      expect(ours.toString('hex')).toBe(Buffer.from(reference.responseSerialize(r)).toString('hex'));
      expect(reference.responseDeserialize(ours)).toMatchObject({
        version_info: r.version_info,
        nonce: r.nonce,
        resources: r.resources.map((a) => ({ type_url: a.type_url, value: a.value })),
      });
    }
  });
});
