// Pinning on a real TLS server with a real certificate: the right fingerprint connects, any other
// is refused before a byte of HTTP (and so of the token) reaches the server.

import { X509Certificate } from 'node:crypto';
import { createServer as createTlsServer, type Server } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateTestCertificate } from '../../fiscal/certificate.ts';
import { IssuanceClient, ServiceNetworkError } from './api-client.ts';
import { normalizeFingerprint } from './pinned-tls.ts';

let server: Server;
let url: string;
let fingerprint: string;
const received: Buffer[] = [];

beforeAll(async () => {
  const { certificate } = generateTestCertificate({ cnpj: '11222333000181', xNome: 'SERVICO TLS TESTE' });
  fingerprint = new X509Certificate(certificate.certificatePem).fingerprint256;
  // A minimal HTTPS answer, recording every byte that arrives.
  server = createTlsServer({ cert: certificate.certificatePem, key: certificate.privateKeyPem }, (socket) => {
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      if (Buffer.concat(received).includes('\r\n\r\n'))
        socket.end('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 15\r\nconnection: close\r\n\r\n{"status":"ok"}');
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('normalizeFingerprint', () => {
  it('reads the usual spellings and refuses anything else', () => {
    const hex = 'ab'.repeat(32);
    const expected = 'AB:'.repeat(31) + 'AB';
    expect(normalizeFingerprint(hex)).toBe(expected);
    expect(normalizeFingerprint(expected.toLowerCase())).toBe(expected);
    expect(normalizeFingerprint(`sha256 Fingerprint=${expected}`)).toBe(expected);
    expect(normalizeFingerprint('ab'.repeat(31))).toBeUndefined();
    expect(normalizeFingerprint('zz'.repeat(32))).toBeUndefined();
  });
});

describe('a pinned client', () => {
  it('talks to the pinned certificate, though nobody signed it', async () => {
    received.length = 0;
    const client = new IssuanceClient({ baseUrl: url, token: 'blc_segredo', fingerprint256: fingerprint });
    expect(await client.health()).toEqual({ ok: true, autoridade: null, avisos: [] });
    expect(Buffer.concat(received).toString()).toContain('authorization: Bearer blc_segredo');
    await client.close();
  });

  it('refuses any other certificate before the request leaves: the token never reaches that server', async () => {
    received.length = 0;
    const other = 'AB:'.repeat(31) + 'AB';
    const client = new IssuanceClient({ baseUrl: url, token: 'blc_segredo', fingerprint256: other });
    const err = await client.health().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ServiceNetworkError);
    expect(err).toMatchObject({ kind: 'certificate', mayHaveReachedService: false });
    expect((err as Error).message).toContain(fingerprint);
    expect(received).toEqual([]);
    await client.close();
  });

  it('without a pin, an unsigned certificate is refused as any HTTPS client would', async () => {
    received.length = 0;
    const client = new IssuanceClient({ baseUrl: url, token: 'blc_segredo' });
    await expect(client.health()).rejects.toMatchObject({ kind: 'certificate' });
    expect(received).toEqual([]);
  });
});
