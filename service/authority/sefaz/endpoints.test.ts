import { describe, expect, it } from 'vitest';
import { UFS } from '../../../fiscal/br/uf.ts';
import { authorizerOf, endpointOf, officialPaths, parseOrigin } from './endpoints.ts';
import { serviceNames } from './services.ts';

describe('endpoints', () => {
  it('NFC-e: eight UFs authorize their own, every other UF uses SVRS; MDF-e is SVRS for all', () => {
    const own = UFS.filter((uf) => authorizerOf('nfe', uf) !== 'SVRS');
    expect(own).toEqual(['AM', 'GO', 'MG', 'MS', 'MT', 'PR', 'RS', 'SP']);
    expect(UFS.every((uf) => authorizerOf('mdfe', uf) === 'SVRS')).toBe(true);
    expect(() => authorizerOf('nfe', 'XX')).toThrow(/UF desconhecida/);
  });

  it('every UF has every service it needs, in both environments, over https', () => {
    for (const uf of UFS) {
      for (const service of serviceNames) {
        for (const env of ['homologacao', 'producao'] as const) expect(endpointOf(service, uf, env).protocol).toBe('https:');
      }
    }
    expect(endpointOf('NFeAutorizacao4', 'BA', 'homologacao').href).toBe('https://nfce-homologacao.svrs.rs.gov.br/ws/NfeAutorizacao/NFeAutorizacao4.asmx');
    expect(endpointOf('NFeConsultaProtocolo4', 'SP', 'producao').href).toBe('https://nfce.fazenda.sp.gov.br/ws/NFeConsultaProtocolo4.asmx');
    expect(endpointOf('NFeConsultaProtocolo4', 'MT', 'homologacao').href).toBe('https://homologacao.sefaz.mt.gov.br/nfcews/services/NfeConsulta4');
    expect(endpointOf('MDFeRecepcaoSinc', 'AM', 'producao').href).toBe('https://mdfe.svrs.rs.gov.br/ws/MDFeRecepcaoSinc/MDFeRecepcaoSinc.asmx');
  });

  it('an origin override replaces scheme, host and port and keeps the official path', () => {
    expect(endpointOf('NFeAutorizacao4', 'BA', 'producao', { origin: 'https://127.0.0.1:8443' }).href).toBe(
      'https://127.0.0.1:8443/ws/NfeAutorizacao/NFeAutorizacao4.asmx',
    );
    expect(() => parseOrigin('http://127.0.0.1:8443')).toThrow(/https:\/\//);
    expect(() => parseOrigin('https://127.0.0.1:8443/ws')).toThrow(/sem caminho/);
    expect(() => parseOrigin('nada')).toThrow(/URL inválida/);
  });

  it('the official paths map each to one service (the simulator routes by them)', () => {
    const paths = officialPaths();
    expect(new Set(paths.values())).toEqual(new Set(serviceNames));
    expect(paths.get('/nfce/services/nfeautorizacao4')).toBe('NFeAutorizacao4');
    expect(paths.get('/ws/nfeconsulta/nfeconsulta4.asmx')).toBe('NFeConsultaProtocolo4');
  });
});
