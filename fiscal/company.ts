// What the fiscal core needs to know about the issuing company (the emitter). The service keeps
// these as company settings; the terminal keeps a copy for contingency issuance.

import type { RateOverride } from './ibscbs/rates.ts';
import type { IbsCbsSettings } from './ibscbs/settings.ts';
import type { TechnicalResponsible } from './resp-tec.ts';

export type Environment = 'producao' | 'homologacao';

/** tpAmb of an environment: 1 produção, 2 homologação. */
export const tpAmbOf = (env: Environment): 1 | 2 => (env === 'producao' ? 1 : 2);

export type Address = {
  xLgr: string;
  nro: string;
  xCpl?: string;
  xBairro: string;
  cMun: string; // 7-digit IBGE code
  xMun: string;
  UF: string;
  CEP: string; // 8 digits
  fone?: string;
};

export type QrCodeVersion = 2 | 3;

export type Emitter = {
  cnpj: string;
  ie: string;
  xNome: string;
  xFant?: string;
  im?: string;
  cnae?: string;
  address: Address;
  /** Código de Regime Tributário: 1 Simples Nacional, 2 SN excesso, 3 Regime Normal, 4 MEI. */
  crt: 1 | 2 | 3 | 4;
  environment: Environment;
  /** NFC-e security code (CSC) and its id, needed for the QR Code v2. */
  csc?: { id: string; token: string };
  qrCodeVersion: QrCodeVersion;
  /** Tax reform (IBS/CBS): opt-in of CRT 1/2/4, default classification, own rates. Absent: defaults. */
  ibsCbs?: IbsCbsSettings;
  /**
   * The deployment's technical responsible (fiscal/resp-tec.ts), written as infRespTec in every
   * NFC-e, NF-e and MDF-e. Not the company's own data: the service adds the one it is configured
   * with to every company's emitter, and the terminal the one it learnt from the service.
   */
  respTec?: TechnicalResponsible;
  /**
   * The IBS/CBS rates the service's operator set for all its companies (`balcao ibscbs aliquotas`),
   * already checked: below the company's own, above the published ones (fiscal/ibscbs/rates.ts).
   */
  operatorRates?: readonly RateOverride[];
};
