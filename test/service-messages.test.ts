// What the terminal shows when the service says no: never the service's own message (written
// for integrators: it names endpoints), always the terminal's words for that error code, for
// every code the service can answer and every operation the terminal asks for. (That the words
// cover exactly the contract's codes is the type check's job: see SERVICE_ERROR_WORDS.)

import { describe, expect, it } from 'vitest';
import { fieldForPeople, refusalForPeople, transientForPeople, type ServiceOperation } from '../electron/core/service-messages.ts';
import type { HttpFailure } from '../electron/core/failures.ts';
import { ERROR_STATUS } from '../base/common/api/errors.ts';

const OPERATIONS: ServiceOperation[] = ['emitir', 'consultar', 'cancelar', 'substituir', 'inutilizar', 'devolucao'];
const SERVICE_SAYS = 'Mensagem para integradores: use POST /api/v1/nfe/devolucao';

const failure = (code: string, status: number, details: HttpFailure['details'] = []): HttpFailure => ({
  kind: 'http',
  status,
  code,
  message: SERVICE_SAYS,
  details,
});

describe("the terminal's words for the service's errors", () => {
  it.each(Object.entries(ERROR_STATUS))('%s: never shows the service message, an endpoint or an HTTP verb', (code, status) => {
    for (const operation of OPERATIONS) {
      const text = refusalForPeople(operation, failure(code, status));
      expect(text).not.toContain(SERVICE_SAYS);
      expect(text).not.toMatch(/\/api\/|\bPOST\b|\bGET\b/);
      expect(text).toMatch(/^O serviço de emissão recusou .+: .+\.$/);
    }
    const transient = transientForPeople(failure(code, status));
    expect(transient).not.toContain(SERVICE_SAYS);
    expect(transient).not.toMatch(/\/api\//);
  });

  it('a late cancellation tells the manager to make the return', () => {
    expect(refusalForPeople('cancelar', failure('prazo_expirado', 422))).toMatch(/prazo de cancelamento \(30 minutos.*faça a devolução/);
    expect(refusalForPeople('substituir', failure('prazo_expirado', 422))).toMatch(/168 horas.*devolução/);
  });

  it("keeps the fiscal checks' details of a validacao, with the fields said the screen's way", () => {
    const text = refusalForPeople(
      'emitir',
      failure('validacao', 422, [
        { field: 'det[1].prod.NCM', message: 'NCM 99999999 inexistente' },
        { field: 'pag[0].card.cAut', message: 'obrigatório com tpIntegra 1' },
      ]),
    );
    expect(text).toContain('item 2, NCM: NCM 99999999 inexistente');
    expect(text).toContain('pagamento 1, cAut: obrigatório com tpIntegra 1');
    expect(fieldForPeople('dest.CPF')).toBe('consumidor, CPF');
  });

  it("an authority's refusal behind the 422 is told in the authority's words (cStat and xMotivo)", () => {
    const f = { ...failure('validacao', 422), rejeicao: { cStat: '218', xMotivo: 'Rejeição: NF-e já está cancelada na base de dados da SEFAZ' } };
    const text = refusalForPeople('cancelar', f);
    expect(text).toBe('A SEFAZ recusou o cancelamento (218): Rejeição: NF-e já está cancelada na base de dados da SEFAZ.');
    expect(text).not.toContain(SERVICE_SAYS);
  });

  it('an unknown code is reported as unknown, with what support needs, still not the service message', () => {
    const text = refusalForPeople('emitir', failure('codigo_novo', 418));
    expect(text).toMatch(/HTTP 418, codigo_novo/);
    expect(text).not.toContain(SERVICE_SAYS);
  });
});
