import { X509Certificate, createPrivateKey } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ipBytes, makeSelfSigned } from '../../../src/runtime/self-signed.js';
import { generateSelfSigned } from '../../../src/runtime/tls.js';

describe('self-signed certificate', () => {
  const notBefore = new Date('2026-01-02T03:04:05Z');
  const notAfter = new Date('2036-01-02T03:04:05Z');
  const pair = makeSelfSigned({
    commonName: 'cp.example.com',
    dnsNames: ['localhost', 'cp.example.com'],
    ips: ['127.0.0.1', '::1', '10.1.2.3'],
    notBefore,
    notAfter,
  });
  const x509 = new X509Certificate(pair.cert);

  it('is a v3 server certificate that node parses, signed by its own key', () => {
    expect(x509.subject).toBe('CN=cp.example.com');
    expect(x509.issuer).toBe('CN=cp.example.com');
    expect(x509.ca).toBe(false);
    expect(x509.verify(x509.publicKey)).toBe(true);
    expect(x509.checkPrivateKey(createPrivateKey(pair.key))).toBe(true);
    expect(x509.publicKey.asymmetricKeyDetails).toEqual({ namedCurve: 'prime256v1' });
    expect(x509.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(pair.key).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
  });

  it('names every host and address it was asked for', () => {
    expect(x509.subjectAltName).toBe(
      'DNS:localhost, DNS:cp.example.com, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, IP Address:10.1.2.3',
    );
    expect(x509.checkHost('cp.example.com')).toBe('cp.example.com');
    expect(x509.checkIP('::1')).toBe('::1');
    expect(x509.checkHost('other.example.com')).toBeUndefined();
  });

  it('is valid over the requested period (UTCTime before 2050, GeneralizedTime after)', () => {
    expect(new Date(x509.validFrom).toISOString()).toBe(notBefore.toISOString());
    expect(new Date(x509.validTo).toISOString()).toBe(notAfter.toISOString());
    const late = makeSelfSigned({
      commonName: 'x',
      dnsNames: ['x'],
      ips: [],
      notBefore,
      notAfter: new Date('2061-05-06T07:08:09Z'),
    });
    expect(new Date(new X509Certificate(late.cert).validTo).toISOString()).toBe('2061-05-06T07:08:09.000Z');
  });

  it('makes a new key and serial each time', () => {
    const again = makeSelfSigned({ commonName: 'x', dnsNames: ['x'], ips: [], notBefore, notAfter });
    expect(again.key).not.toBe(pair.key);
    expect(new X509Certificate(again.cert).serialNumber).not.toBe(x509.serialNumber);
  });

  it('encodes IPv4 and every IPv6 form in 4 and 16 bytes', () => {
    expect([...ipBytes('10.1.2.3')]).toEqual([10, 1, 2, 3]);
    expect(ipBytes('::1').toString('hex')).toBe('00000000000000000000000000000001');
    expect(ipBytes('::').toString('hex')).toBe('0'.repeat(32));
    expect(ipBytes('fe80::1:2').toString('hex')).toBe('fe800000000000000000000000010002');
    expect(ipBytes('2001:db8:0:0:1:0:0:1').toString('hex')).toBe('20010db8000000000001000000000001');
    expect(ipBytes('::ffff:10.1.2.3').toString('hex')).toBe('00000000000000000000ffff0a010203');
    expect(() => ipBytes('host')).toThrow(/not an IP address/);
  });

  it('generateSelfSigned: localhost, the loopbacks and the advertised host, for ten years', async () => {
    const made = new X509Certificate((await generateSelfSigned('10.9.8.7')).cert);
    expect(made.subjectAltName).toContain('DNS:localhost');
    expect(made.subjectAltName).toContain('IP Address:10.9.8.7');
    expect(made.subjectAltName).toContain('IP Address:127.0.0.1');
    const years = (Date.parse(made.validTo) - Date.parse(made.validFrom)) / (365 * 24 * 3600 * 1000);
    expect(Math.round(years)).toBe(10);
  });
});
