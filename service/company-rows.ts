// A company's row, as both stores keep it (service/sqlite-store.ts, service/pg-store.ts): the
// same columns in the same types (sealed secrets as bytes, instants as ISO text), so both read
// and write it with the same mapping.

import type { Environment, QrCodeVersion } from '../fiscal/company.ts';
import { DEFAULT_IBSCBS_SETTINGS, type IbsCbsSettings } from '../fiscal/ibscbs/settings.ts';
import type { CompanyRecord, CompanySettings, Crt } from './store.ts';

export type CompanyRow = {
  id: string;
  cnpj: string;
  ie: string;
  nome: string;
  fantasia: string | null;
  logradouro: string;
  numero: string;
  complemento: string | null;
  bairro: string;
  codigo_municipio: string;
  municipio: string;
  uf: string;
  cep: string;
  telefone: string | null;
  crt: number;
  csc_id: string | null;
  csc_enc: Buffer | null;
  qrcode_versao: number;
  ambiente: string;
  certificado_pfx_enc: Buffer;
  certificado_senha_enc: Buffer;
  certificado_sha256: string;
  certificado_validade: string;
  /** JSON of the company's IBS/CBS settings; null in rows older than the migration: the defaults. */
  ibscbs: string | null;
  created_at: string;
  settings_version: number;
  /** Null only in rows older than the migration that added it, which fills it; read as created_at. */
  updated_at: string | null;
};

/** The columns a settings update writes: all but the identity (id, cnpj, uf) and the timestamps. */
export type SettingsRow = Omit<CompanyRow, 'id' | 'cnpj' | 'uf' | 'created_at' | 'settings_version' | 'updated_at'>;

export function settingsRow(c: CompanySettings): SettingsRow {
  return {
    ie: c.ie,
    nome: c.nome,
    fantasia: c.fantasia,
    logradouro: c.address.logradouro,
    numero: c.address.numero,
    complemento: c.address.complemento,
    bairro: c.address.bairro,
    codigo_municipio: c.address.codigoMunicipio,
    municipio: c.address.municipio,
    cep: c.address.cep,
    telefone: c.address.telefone,
    crt: c.crt,
    csc_id: c.csc?.id ?? null,
    csc_enc: c.csc?.sealed ?? null,
    qrcode_versao: c.qrcodeVersao,
    ambiente: c.ambiente,
    certificado_pfx_enc: c.certificate.pfxSealed,
    certificado_senha_enc: c.certificate.passwordSealed,
    certificado_sha256: c.certificate.sha256,
    certificado_validade: c.certificate.notAfter,
    ibscbs: JSON.stringify(c.ibsCbs),
  };
}

export function companyFromRow(r: CompanyRow): CompanyRecord {
  return {
    id: r.id,
    cnpj: r.cnpj,
    ie: r.ie,
    nome: r.nome,
    fantasia: r.fantasia,
    address: {
      logradouro: r.logradouro,
      numero: r.numero,
      complemento: r.complemento,
      bairro: r.bairro,
      codigoMunicipio: r.codigo_municipio,
      municipio: r.municipio,
      uf: r.uf,
      cep: r.cep,
      telefone: r.telefone,
    },
    crt: r.crt as Crt,
    csc: r.csc_id !== null && r.csc_enc !== null ? { id: r.csc_id, sealed: r.csc_enc } : null,
    qrcodeVersao: r.qrcode_versao as QrCodeVersion,
    ambiente: r.ambiente as Environment,
    certificate: {
      pfxSealed: r.certificado_pfx_enc,
      passwordSealed: r.certificado_senha_enc,
      sha256: r.certificado_sha256,
      notAfter: r.certificado_validade,
    },
    ibsCbs: r.ibscbs === null ? { ...DEFAULT_IBSCBS_SETTINGS, rates: [] } : (JSON.parse(r.ibscbs) as IbsCbsSettings),
    createdAt: r.created_at,
    version: r.settings_version,
    updatedAt: r.updated_at ?? r.created_at,
  };
}
