// The system printer (IPP to a print queue) against the real CUPS scheduler of Debian, started
// privately by test/helpers/cups-test-server.ts, with raw queues whose device is an AppSocket printer.

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startAppSocketPrinter, startCupsd, type AppSocketPrinter, type CupsTestServer } from '../../test/helpers/cups-test-server.ts';
import { JOB_STATE, parseSystemQueue, SystemQueuePrinter } from './system-queue.ts';
import { printerRejection, testReceipt } from '../../test/helpers/printer-receipts.ts';
import { KEPT } from './transports.ts';

describe('parseSystemQueue', () => {
  it('takes a bare queue name as a queue of this computer’s CUPS', () => {
    const q = parseSystemQueue('TM-T20')!;
    expect(q.local).toBe(true);
    expect(q.endpoint.href).toBe('http://localhost:631/printers/TM-T20');
    expect(q.printerUri).toBe('ipp://localhost:631/printers/TM-T20');
    expect(q.description).toBe('fila "TM-T20"');
    expect(parseSystemQueue('Térmica_Caixa.1', '127.0.0.1:8631')!.endpoint.href).toBe('http://127.0.0.1:8631/printers/T%C3%A9rmica_Caixa.1');
  });

  it('takes ipp, ipps, http and https URIs, with each scheme’s default port', () => {
    expect(parseSystemQueue('ipp://servidor/printers/caixa')!.endpoint.href).toBe('http://servidor:631/printers/caixa');
    expect(parseSystemQueue('ipps://servidor/printers/caixa')!.endpoint.href).toBe('https://servidor:631/printers/caixa');
    const windows = parseSystemQueue('http://servidor/printers/Termica/.printer')!;
    expect(windows.endpoint.href).toBe('http://servidor/printers/Termica/.printer');
    expect(windows.printerUri).toBe('http://servidor/printers/Termica/.printer');
    expect(windows.local).toBe(false);
    expect(parseSystemQueue('https://192.168.0.9:8443/printers/x')!.endpoint.port).toBe('8443');
  });

  it.each([
    ['', 'vazio'],
    ['minha impressora', 'espaço'],
    ['fila/1', 'barra'],
    ['fila#1', 'cerquilha'],
    ['a'.repeat(128), 'longo demais'],
    ['lpd://servidor/fila', 'esquema não IPP'],
    ['ipp://usuario:senha@servidor/printers/x', 'credenciais na URI'],
    ['ipp://servidor', 'sem caminho da fila'],
    ['ipp://servidor/printers/x?y=1', 'consulta'],
  ])('refuses %j (%s)', (address) => {
    expect(parseSystemQueue(address)).toBeUndefined();
  });
});

describe('SystemQueuePrinter on Debian’s CUPS', () => {
  let cups: CupsTestServer;
  let device: AppSocketPrinter;
  let deadPort: number;
  const printers: SystemQueuePrinter[] = [];
  const printer = (queue: string, options: { timeoutMs?: number } = {}): SystemQueuePrinter => {
    const p = new SystemQueuePrinter({ address: queue, localServer: cups.server, timeoutMs: options.timeoutMs ?? 10_000, pollMs: 50 });
    printers.push(p);
    return p;
  };

  beforeAll(async () => {
    device = await startAppSocketPrinter();
    deadPort = await freePort();
    cups = await startCupsd([
      { name: 'balcao', device: `socket://127.0.0.1:${device.port}` },
      { name: 'parada', device: `socket://127.0.0.1:${device.port}`, stopped: true },
      { name: 'recusando', device: `socket://127.0.0.1:${device.port}`, rejecting: true },
      { name: 'sem-impressora', device: `socket://127.0.0.1:${deadPort}` },
      { name: 'sem-cancelar', device: `socket://127.0.0.1:${deadPort}`, noCancel: true },
      // The serial backend fails at once on a port that does not exist: CUPS stops the queue.
      { name: 'quebrada', device: 'serial:/dev/balcao-porta-inexistente?baud=9600' },
    ]);
  });

  afterAll(async () => {
    await Promise.all(printers.map((p) => p.close()));
    await cups?.stop();
    await device?.close();
  });

  it('delivers a raw job byte-identical at the queue’s device, and resolves only once it was delivered', async () => {
    const receipt = testReceipt(4321, 12).escpos('epson-tm-t20');
    const everyByte = Uint8Array.from({ length: 256 * 4 }, (_, i) => i % 256);
    const large = randomBytes(256 * 1024);
    const p = printer('balcao');
    for (const job of [receipt, everyByte, large]) {
      const before = device.jobs().length;
      await p.send(job);
      // Completed means the backend saw the device close after the last byte: it is there now.
      expect(device.jobs()).toHaveLength(before + 1);
      expect(Buffer.compare(device.jobs().at(-1)!, Buffer.from(job)), cups.log()).toBe(0);
    }
  });

  it('names a queue that does not exist, in Portuguese, and keeps the receipt printable', async () => {
    const err = await printerRejection(printer('nao-existe').send(Uint8Array.of(0x1b, 0x40)));
    expect(err.code).toBe('offline');
    expect(err.message).toBe(
      `Fila de impressão "nao-existe" não encontrada no sistema (CUPS em ${cups.server}). Confira o nome da fila em Configurações → Impressora (lpstat -p lista as filas); ${KEPT}`,
    );
  });

  it('refuses a stopped queue before queueing anything, so nothing prints when it is resumed', async () => {
    const before = device.jobs().length;
    const err = await printerRejection(printer('parada').send(Uint8Array.of(0x1b, 0x40)));
    expect(err.message).toMatch(
      /^A fila "parada" está parada no sistema \(Pausada pelo teste\)\. .*cupsenable parada\); o cupom fica guardado para reimpressão\.$/,
    );
    const queued = await printer('parada').operation(0x0a, [{ tag: 0x44, name: 'which-jobs', value: 'not-completed' }]);
    expect(queued.job.size).toBe(0);
    expect(device.jobs()).toHaveLength(before);
  });

  it('refuses a queue that does not accept jobs', async () => {
    const err = await printerRejection(printer('recusando').send(Uint8Array.of(0x1b, 0x40)));
    expect(err.message).toMatch(/^A fila "recusando" não está aceitando trabalhos\. .*cupsaccept recusando\); o cupom/);
  });

  it('cancels a job its printer never took, so it cannot come out after a reprint', async () => {
    const p = printer('sem-impressora', { timeoutMs: 1500 });
    const err = await printerRejection(p.send(Uint8Array.of(0x1b, 0x40, 0x41)));
    // CUPS' socket backend keeps retrying a printer that refuses the connection; the job
    // stays "processing" with the backend's message, in the language the request asked for.
    expect(err.code).toBe('timeout');
    expect(err.message).toMatch(
      /^A impressora da fila "sem-impressora" não concluiu o trabalho a tempo \(A impressora pode não existir ou está indisponível neste momento\)\. Verifique/,
    );
    expect(err.message).not.toMatch(/não pôde ser cancelado/);
    expect(err.message.endsWith(KEPT)).toBe(true);
    const left = await p.operation(0x0a, [{ tag: 0x44, name: 'which-jobs', value: 'not-completed' }]);
    expect(left.job.size, cups.log()).toBe(0);
    const all = await p.operation(0x0a, [
      { tag: 0x44, name: 'which-jobs', value: 'completed' },
      { tag: 0x44, name: 'requested-attributes', value: ['job-id', 'job-state'] },
    ]);
    expect(all.job.get('job-state')).toEqual([JOB_STATE.canceled]);
  });

  it('says so when the server will not cancel a job that did not print: it may still come out', async () => {
    const p = printer('sem-cancelar', { timeoutMs: 1500 });
    const err = await printerRejection(p.send(Uint8Array.of(0x1b, 0x40)));
    expect(err.code).toBe('timeout');
    expect(err.message).toMatch(
      /^A impressora da fila "sem-cancelar" não concluiu o trabalho a tempo \(.*\)\. Verifique .*ligada\. O trabalho \d+ não pôde ser cancelado e ainda pode sair quando a impressora voltar: confira a fila do sistema antes de reimprimir; o cupom fica guardado para reimpressão\.$/,
    );
    const left = await p.operation(0x0a, [{ tag: 0x44, name: 'which-jobs', value: 'not-completed' }]);
    expect(left.job.get('job-id')).toHaveLength(1);
  });

  it('cancels the job of a queue that stopped on a device error, and refuses the next one until the queue is resumed', async () => {
    const p = printer('quebrada');
    const err = await printerRejection(p.send(Uint8Array.of(0x1b, 0x40)));
    expect(err.code).toBe('offline');
    expect(err.message).toBe(
      `A fila "quebrada" parou ao imprimir (Unable to open serial port: No such file or directory). Verifique a impressora e retome a fila no sistema; ${KEPT}`,
    );
    const left = await p.operation(0x0a, [{ tag: 0x44, name: 'which-jobs', value: 'not-completed' }]);
    expect(left.job.size).toBe(0);
    const next = await printerRejection(p.send(Uint8Array.of(0x1b, 0x40)));
    expect(next.message).toMatch(/^A fila "quebrada" está parada no sistema \(Unable to open serial port: No such file or directory\)\. /);
  });

  it('says so when CUPS itself is not running', async () => {
    const down = new SystemQueuePrinter({ address: 'balcao', localServer: `127.0.0.1:${deadPort}`, timeoutMs: 2000 });
    printers.push(down);
    const err = await printerRejection(down.send(Uint8Array.of(0x1b, 0x40)));
    expect(err.code).toBe('offline');
    expect(err.message).toBe(
      `O serviço de impressão do sistema (CUPS) não respondeu em 127.0.0.1:${deadPort} (fila "balcao"). Verifique se o CUPS está instalado e em execução; ${KEPT}`,
    );
  });
});
