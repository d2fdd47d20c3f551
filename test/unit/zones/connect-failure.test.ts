import { describe, expect, it } from 'vitest';
import { explainConnectFailure } from '../../../src/zones/connect-failure.js';

/** gRPC's own texts, as a zone saw them against each kind of wrong address. */
const seen = (last: string) =>
  `Global→zone: UNAVAILABLE: No connection established. Last error: ${last}. Resolution note: `;
const G = 'grpcs://127.0.0.1:5681';

describe('explainConnectFailure: what a zone should change when it cannot reach Global', () => {
  it('a plain (non-TLS) port, such as the HTTP API', () => {
    const text = seen(
      'Error: 80BC0A86777F0000:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/openssl/openssl/ssl/record/ssl3_record.c:350:\n',
    );
    expect(explainConnectFailure(text, G)).toBe(
      '127.0.0.1:5681 does not speak TLS: is it the sync port of a Global (multizone.global.kds.grpcPort, 5685 by default)? (TLS error: wrong version number)',
    );
  });

  it('a TLS port that is not gRPC, such as the HTTPS API', () => {
    const text = seen(
      'Error: 80EC433A157F0000:error:0A000460:SSL routines:ssl3_read_bytes:tlsv1 alert no application protocol:../deps/openssl/openssl/ssl/record/rec_layer_s3.c:1601:SSL alert number 120\n',
    );
    expect(explainConnectFailure(text, G)).toMatch(
      /is a TLS server but not a gRPC one: point multizone.zone.globalAddress/,
    );
  });

  it('a self-signed Global: names rootCaFile and its env variable', () => {
    expect(explainConnectFailure(seen('Error: self-signed certificate'), G)).toBe(
      "the certificate of Global at 127.0.0.1:5681 is not trusted (self-signed certificate): set multizone.zone.kds.rootCaFile (MESH_MULTIZONE_ZONE_KDS_ROOT_CA_FILE) to the CA that signed it (for a Global's own self-signed certificate: tls/cert.pem in its data dir)",
    );
  });

  it('a certificate for another name, nothing listening, an unknown host, anything else', () => {
    const misnamed = explainConnectFailure(
      seen(
        "Error: Hostname/IP does not match certificate's altnames: IP: 127.0.0.2 is not in the cert's list: 127.0.0.1",
      ),
      'grpcs://127.0.0.2:5685',
    );
    expect(misnamed).toContain('does not name the address dialled');
    expect(misnamed).toContain('127.0.0.2 is not in the cert');
    expect(
      explainConnectFailure(seen('Error: connect ECONNREFUSED 127.0.0.1:5799'), 'grpcs://127.0.0.1:5799'),
    ).toBe(
      'nothing listens at 127.0.0.1:5799: is Global running, and is this the sync port of a Global (multizone.global.kds.grpcPort, 5685 by default)?',
    );
    expect(
      explainConnectFailure(seen('Error: getaddrinfo ENOTFOUND nope.example'), 'grpcs://nope.example:5685'),
    ).toContain('cannot be resolved');
    expect(explainConnectFailure('zone→Global: UNAUTHENTICATED: bad token', G)).toBe(
      'zone→Global: UNAUTHENTICATED: bad token',
    );
  });
});
