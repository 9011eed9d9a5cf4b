// Waiting for an MDF-e call to be under way at the service, for tests that race a second call
// against it: two requests started one after the other may reach the service in either order,
// so the test first sees the manifest claimed ('processando') before it sends the duplicate.
import type { api } from './service-process.ts';

type Client = ReturnType<typeof api>;

/** Resolves once the service lists manifest `numero` as 'processando'; fails after `timeoutMs`. */
export async function untilProcessing(client: Client, numero: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const list = await client.get('/api/v1/mdfe?limit=200');
    const found = (list.body.data as { numero: number; situacao: string }[]).find((m) => m.numero === numero);
    if (found?.situacao === 'processando') return;
    if (found) throw new Error(`MDF-e ${numero} já saiu de processando (${found.situacao}) antes da segunda chamada`);
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`MDF-e ${numero} não ficou em processando em ${timeoutMs} ms`);
}
