import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isIP } from 'node:net';
import * as asn1 from 'asn1js';

/**
 * A self-signed X.509 v3 server certificate (RFC 5280) for an ECDSA P-256 key: node:crypto makes
 * the key, its SubjectPublicKeyInfo and the signature, asn1js writes the DER. It replaced the
 * `selfsigned` package, whose ~140 ms of module loading was a sixth of a first start.
 */
export interface SelfSignedRequest {
  commonName: string;
  dnsNames: string[];
  ips: string[];
  notBefore: Date;
  notAfter: Date;
}

const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
};

const der = (value: asn1.AsnType): Buffer => Buffer.from(value.toBER(false));

/** A context-specific tag around DER (`[n] EXPLICIT`) or primitive bytes (`[n] IMPLICIT`). */
const explicit = (tagNumber: number, value: asn1.AsnType) =>
  new asn1.Constructed({ idBlock: { tagClass: 3, tagNumber }, value: [value] });
const implicit = (tagNumber: number, bytes: Uint8Array) =>
  new asn1.Primitive({ idBlock: { tagClass: 3, tagNumber }, valueHex: bytes });

/** The 4 or 16 bytes of an IP address (`::` expanded). */
export function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  if (isIP(ip) !== 6) throw new Error(`not an IP address: ${ip}`);
  let text = ip;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const b = v4[1].split('.').map(Number);
    text = `${text.slice(0, v4.index)}${((b[0] << 8) | b[1]).toString(16)}:${((b[2] << 8) | b[3]).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const groups = (s: string | undefined) => (s ? s.split(':') : []);
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  const all = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  const out = Buffer.alloc(16);
  all.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}

const time = (d: Date) =>
  d.getUTCFullYear() < 2050 ? new asn1.UTCTime({ valueDate: d }) : new asn1.GeneralizedTime({ valueDate: d });

const extension = (oid: string, critical: boolean, value: asn1.AsnType) =>
  new asn1.Sequence({
    value: [
      new asn1.ObjectIdentifier({ value: oid }),
      ...(critical ? [new asn1.Boolean({ value: true })] : []),
      new asn1.OctetString({ valueHex: der(value) }),
    ],
  });

const pem = (label: string, body: Buffer) =>
  `-----BEGIN ${label}-----\n${body.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n?$/, '\n')}-----END ${label}-----\n`;

/** Makes the key pair and the certificate; both PEM (the key PKCS#8). */
export function makeSelfSigned(req: SelfSignedRequest): { key: string; cert: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const serial = randomBytes(16);
  serial[0] = 0x40 | (serial[0] & 0x3f); // positive, no leading zero byte (minimal DER)
  const name = new asn1.Sequence({
    value: [
      new asn1.Set({
        value: [
          new asn1.Sequence({
            value: [
              new asn1.ObjectIdentifier({ value: OID.commonName }),
              new asn1.Utf8String({ value: req.commonName }),
            ],
          }),
        ],
      }),
    ],
  });
  const algorithm = () =>
    new asn1.Sequence({ value: [new asn1.ObjectIdentifier({ value: OID.ecdsaWithSha256 })] });
  // The key identifier: SHA-1 of the public key bits is the RFC's method (1); a random one is as good.
  const keyId = randomBytes(20);
  const tbs = new asn1.Sequence({
    value: [
      explicit(0, new asn1.Integer({ value: 2 })),
      new asn1.Integer({ valueHex: serial }),
      algorithm(),
      name,
      new asn1.Sequence({ value: [time(req.notBefore), time(req.notAfter)] }),
      name,
      asn1.fromBER(spki).result,
      explicit(
        3,
        new asn1.Sequence({
          value: [
            extension(OID.basicConstraints, true, new asn1.Sequence({ value: [] })),
            // digitalSignature (bit 0): what a TLS server's ECDSA key does.
            extension(
              OID.keyUsage,
              true,
              new asn1.BitString({ valueHex: Buffer.from([0x80]), unusedBits: 7 }),
            ),
            extension(
              OID.extKeyUsage,
              false,
              new asn1.Sequence({ value: [new asn1.ObjectIdentifier({ value: OID.serverAuth })] }),
            ),
            extension(OID.subjectKeyIdentifier, false, new asn1.OctetString({ valueHex: keyId })),
            extension(
              OID.subjectAltName,
              false,
              new asn1.Sequence({
                value: [
                  ...req.dnsNames.map((n) => implicit(2, Buffer.from(n, 'ascii'))),
                  ...req.ips.map((ip) => implicit(7, ipBytes(ip))),
                ],
              }),
            ),
          ],
        }),
      ),
    ],
  });
  const tbsDer = der(tbs);
  const signature = sign('sha256', tbsDer, privateKey);
  const cert = new asn1.Sequence({
    value: [tbs, algorithm(), new asn1.BitString({ valueHex: signature })],
  });
  return {
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    cert: pem('CERTIFICATE', der(cert)),
  };
}
