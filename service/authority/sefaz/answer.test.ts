import { describe, expect, it } from 'vitest';
import { AnswerFormatError, childText, readAnswer, serialize, SoapFaultError } from './answer.ts';

const NFE = 'http://www.portalfiscal.inf.br/nfe';
const WSDL = 'http://www.portalfiscal.inf.br/nfe/wsdl/NFeStatusServico4';
const ret = (open = `<retConsStatServ xmlns="${NFE}" versao="4.00">`, close = '</retConsStatServ>', p = '') =>
  `${open}<${p}tpAmb>2</${p}tpAmb><${p}verAplic>SP_NFCE</${p}verAplic><${p}cStat>107</${p}cStat><${p}xMotivo>Serviço em Operação</${p}xMotivo>${close}`;

describe('readAnswer: by namespace, whatever the prefixes', () => {
  it.each([
    ['soap (.asmx hosts)', 'soap'],
    ['env (GO)', 'env'],
    ['S (Java hosts)', 'S'],
  ])('envelope prefix %s', (_, p) => {
    const text = `<?xml version="1.0" encoding="utf-8"?><${p}:Envelope xmlns:${p}="http://www.w3.org/2003/05/soap-envelope"><${p}:Header/><${p}:Body><nfeResultMsg xmlns="${WSDL}">${ret()}</nfeResultMsg></${p}:Body></${p}:Envelope>`;
    const answer = readAnswer('NFeStatusServico4', text);
    expect(childText(answer, NFE, 'cStat')).toBe('107');
    expect(childText(answer, NFE, 'xMotivo')).toBe('Serviço em Operação');
  });

  it('a prefixed payload and indentation read the same, and are written back compact and unprefixed', () => {
    const payload = ret(`<ns2:retConsStatServ xmlns:ns2="${NFE}" versao="4.00">\n  `, '\n</ns2:retConsStatServ>', 'ns2:');
    const text = `<S:Envelope xmlns:S="http://www.w3.org/2003/05/soap-envelope"><S:Body><ns3:nfeResultMsg xmlns:ns3="${WSDL}">${payload}</ns3:nfeResultMsg></S:Body></S:Envelope>`;
    const answer = readAnswer('NFeStatusServico4', text);
    expect(childText(answer, NFE, 'cStat')).toBe('107');
    expect(serialize(answer, NFE)).toBe(ret(`<retConsStatServ versao="4.00">`));
    expect(serialize(answer, null)).toBe(ret());
  });

  it('the same element names in another namespace are not taken for the answer', () => {
    const text = `<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body><nfeResultMsg xmlns="${WSDL}">${ret(`<retConsStatServ xmlns="urn:outro" versao="4.00">`)}</nfeResultMsg></soap:Body></soap:Envelope>`;
    expect(() => readAnswer('NFeStatusServico4', text)).toThrow(AnswerFormatError);
  });

  it('a SOAP Fault becomes SoapFaultError with its code and reason; not XML or not SOAP, AnswerFormatError', () => {
    const fault = `<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body><soap:Fault><soap:Code><soap:Value>soap:Receiver</soap:Value></soap:Code><soap:Reason><soap:Text xml:lang="en">Server was unable to process request.</soap:Text></soap:Reason></soap:Fault></soap:Body></soap:Envelope>`;
    const err = (() => {
      try {
        readAnswer('NFeStatusServico4', fault);
      } catch (e) {
        return e;
      }
    })() as SoapFaultError;
    expect(err).toBeInstanceOf(SoapFaultError);
    expect(err.code).toBe('soap:Receiver');
    expect(err.reason).toBe('Server was unable to process request.');
    expect(() => readAnswer('NFeStatusServico4', '<html><body>Service Unavailable</body></html>')).toThrow(AnswerFormatError);
    expect(() => readAnswer('NFeStatusServico4', 'não é xml')).toThrow(AnswerFormatError);
  });
});
