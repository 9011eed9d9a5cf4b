import { describe, expect, it } from 'vitest';
import { ratesWarning } from './readiness.ts';

describe('next year’s IBS/CBS rates, said in words', () => {
  it('silent on 30 November; from 1 December it says the 2027 CBS is missing, what the NFC-e will carry and the one command that fixes it', () => {
    expect(ratesWarning('2026-11-30', [], [], 'operador')).toBeUndefined();
    const w = ratesWarning('2026-12-01', [], [], 'operador')!;
    expect(w).toMatchObject({ date: '2027-01-01', missing: [], provisional: [{ name: 'pCBS', rate: '8.80' }] });
    expect(w.message).toBe(
      'Alíquotas do IBS/CBS de 2027: a partir de 01/01/2027 as NFC-e levarão a alíquota provisória do Balcão (CBS 8,80 %): ' +
        'nem a publicação oficial, nem o operador do serviço, nem a empresa a informaram. ' +
        'Defina-as para todas as empresas com balcao ibscbs aliquotas --periodos "AAAA-01-01..AAAA-12-31 cbs=X.XX" (ou PUT /api/v1/operador/aliquotas-ibscbs); cada empresa ainda pode ter as suas.',
    );
    // The manager is told whom to ask.
    expect(ratesWarning('2026-12-01', [], [], 'empresa')!.message).toMatch(/Peça ao operador do serviço de emissão/);
  });

  it('quiet once the operator (or the company) states the CBS; in 2027 it keeps saying so while the provisional rate is used; from December 2028 nothing at all exists for 2029', () => {
    expect(ratesWarning('2026-12-15', [], [{ from: '2027-01-01', to: '2027-12-31', pCBS: '8.70' }], 'operador')).toBeUndefined();
    expect(ratesWarning('2026-12-15', [{ from: '2027-01-01', pCBS: '8.70' }], [], 'empresa')).toBeUndefined();
    expect(ratesWarning('2027-03-10', [], [], 'operador')!.message).toMatch(/^Alíquotas do IBS\/CBS de 2027: as NFC-e estão levando a alíquota provisória/);
    // The operator's 2027 stops at 2027-12-31: 2028 is provisional again, said from December.
    expect(ratesWarning('2027-12-01', [], [{ from: '2027-01-01', to: '2027-12-31', pCBS: '8.70' }], 'operador')).toMatchObject({ date: '2028-01-01' });
    const w2029 = ratesWarning('2028-12-01', [], [{ from: '2027-01-01', to: '2028-12-31', pCBS: '8.70' }], 'operador')!;
    expect(w2029).toMatchObject({ date: '2029-01-01', missing: ['pIBSUF', 'pIBSMun', 'pCBS'] });
    expect(w2029.message).toMatch(
      /não há alíquota para IBS da UF, IBS do município, CBS em 2029: a partir de 01\/01\/2029 as NFC-e do regime normal são recusadas/,
    );
  });
});
