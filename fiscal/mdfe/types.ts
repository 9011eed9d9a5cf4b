// The MDF-e request body of POST /api/v1/mdfe/emitir (docs/api.md, "MDF-e"; road modal), as the service receives it.
// Codes are strings; the monetary and quantity values the specification shows as JSON numbers
// (vComp, vContrato, vCarga, qCarga) are numbers here too (a decimal string is also accepted, see
// build.ts `decimalOf`). Where the specification says "not shown", the shape below is our decision
// and mirrors the official schema (mdfe_v3.00.xsd, mdfeModalRodoviario_v3.00.xsd) so that every
// field maps to exactly one XML element with the same name:
// - `ide.infPercurso` is `{ UFPer }[]`, in travel order, UFIni/UFFim not repeated (docs/fiscal.md, "MDF-e percurso");
// - `rodo.veicTracao.prop` is the schema's `prop` group (CNPJ | CPF, RNTRC, xNome, IE?, UF, tpProp);
// - NF-e documents are linked by `infDoc.infMunDescarga[].infNFe[].chNFe`, beside `infCTe[].chCTe`;
// - `tpTransp` sits at the top level, as the specification lists it (it goes to `ide/tpTransp`).
//
// Groups the tax authority requires for a road carrier (seg, prodPred, rodo.infContratante) are
// optional in the type on purpose: their absence is a tax-authority rejection (mdfeRuleViolation),
// not a malformed request.

export type MdfeLoadingMunicipality = {
  cMunCarrega: string; // 7-digit IBGE code, a municipality of ide.UFIni
  xMunCarrega: string;
};

export type MdfeRouteState = { UFPer: string };

export type MdfeIde = {
  /** Manifest number chosen by the caller: 1..999999999. */
  nMDF: number;
  /** Series: 0..999. */
  serie: number;
  /** Transport mode; only "1" (rodoviário) is supported. Defaults to "1". */
  modal?: string;
  /** 1 prestador de serviço de transporte, 2 transportador de carga própria, 3 CT-e globalizado. */
  tpEmit: string;
  UFIni: string;
  UFFim: string;
  infMunCarrega: MdfeLoadingMunicipality[];
  infPercurso?: MdfeRouteState[];
  /** Planned start of the trip, ISO 8601 with offset; written in the Brasília offset. */
  dhIniViagem?: string;
};

export type MdfeDriver = {
  xNome: string;
  CPF: string; // 11 digits with valid check digits
};

/** Owner of a third-party vehicle: the schema's `veicTracao/prop`. Exactly one of CNPJ / CPF. */
export type MdfeVehicleOwner = {
  CNPJ?: string;
  CPF?: string;
  /** The owner's RNTRC (8 digits). */
  RNTRC: string;
  xNome: string;
  /** State registration; absent → written empty (TIeDest accepts it), UF still informed. */
  IE?: string;
  UF: string;
  /** 0 TAC agregado, 1 TAC independente, 2 outros. */
  tpProp: string;
};

export type MdfeTractionVehicle = {
  cInt?: string;
  /** Plate: Mercosul (ABC1D23) or old format (ABC1234); "-" and spaces are ignored. */
  placa: string;
  RENAVAM?: string;
  /** Tare in kg (integer, up to 6 digits). */
  tara: string | number;
  capKG?: string | number;
  capM3?: string | number;
  /** Present only for a third-party vehicle, together with the top-level `tpTransp`. */
  prop?: MdfeVehicleOwner;
  /** One driver (as the specification shows it) or up to 10. */
  condutor: MdfeDriver | MdfeDriver[];
  /** 01 truck, 02 toco, 03 cavalo mecânico, 04 VAN, 05 utilitário, 06 outros. Default "06". */
  tpRod?: string;
  /** 00 não aplicável, 01 aberta, 02 fechada/baú, 03 granelera, 04 porta container, 05 sider. Default "00". */
  tpCar?: string;
  /** State where the vehicle is licensed. */
  UF?: string;
};

export type MdfeContractor = {
  xNome?: string;
  CNPJ?: string;
  CPF?: string;
};

export type MdfePaymentComponent = {
  /** 01 vale-pedágio, 02 impostos/taxas, 03 despesas, 04 frete, 99 outros. */
  tpComp: string;
  vComp: number | string;
  xComp?: string;
};

export type MdfeBankInfo = {
  PIX?: string;
  codBanco?: string;
  codAgencia?: string;
  CNPJIPEF?: string;
};

export type MdfePayment = {
  xNome?: string;
  CNPJ?: string;
  CPF?: string;
  Comp: MdfePaymentComponent[];
  vContrato: number | string;
  /** 0 pagamento à vista, 1 a prazo. */
  indPag: string;
  /** Exactly one of PIX, CNPJIPEF, or codBanco + codAgencia. */
  infBanc: MdfeBankInfo;
};

export type MdfeRoad = {
  /** The carrier's RNTRC (8 digits): `infANTT/RNTRC`. */
  RNTRC?: string;
  veicTracao: MdfeTractionVehicle;
  infContratante?: MdfeContractor[];
  infPag?: MdfePayment[];
};

export type MdfeLinkedCTe = { chCTe: string };
export type MdfeLinkedNFe = { chNFe: string };

export type MdfeUnloadingMunicipality = {
  cMunDescarga: string; // 7-digit IBGE code, a municipality of ide.UFFim
  xMunDescarga: string;
  infCTe?: MdfeLinkedCTe[];
  infNFe?: MdfeLinkedNFe[];
};

/** Cargo insurance (the API's names, docs/api.md "MDF-e"; `seg_CNPJ` is the insurer's CNPJ, `infSeg/CNPJ`). */
export type MdfeInsurance = {
  /** 1 emitente do MDF-e, 2 contratante do transporte. */
  respSeg: string;
  /** CNPJ / CPF of the responsible party (`infResp`); for respSeg "1" the emitter's CNPJ is used when absent. */
  CNPJ?: string;
  CPF?: string;
  xSeg?: string;
  seg_CNPJ?: string;
  nApol?: string;
  /** Endorsement number(s). */
  nAver?: string | string[];
};

export type MdfeCargoLocation = {
  cepCarrega: string; // 8 digits
  cepDescarrega: string; // 8 digits
};

export type MdfePredominantProduct = {
  /** 01..12 (01 granel sólido … 05 carga geral … 11 perigosa carga geral, 12 granel pressurizada). */
  tpCarga: string;
  xProd: string;
  cEAN?: string;
  NCM?: string;
  infLotacao?: MdfeCargoLocation;
};

export type MdfeTotals = {
  vCarga: number | string;
  /** 01 KG, 02 TON. */
  cUnid: string;
  qCarga: number | string;
};

export type MdfeRequest = {
  ide: MdfeIde;
  /** 1 ETC, 2 TAC, 3 CTC; only together with `rodo.veicTracao.prop` (rejection 745 otherwise). */
  tpTransp?: string;
  rodo: MdfeRoad;
  infDoc: { infMunDescarga: MdfeUnloadingMunicipality[] };
  /** One insurance group (as the specification shows it) or several. */
  seg?: MdfeInsurance | MdfeInsurance[];
  prodPred?: MdfePredominantProduct;
  tot: MdfeTotals;
  lacres?: { nLacre: string }[];
  infAdic?: { infAdFisco?: string; infCpl?: string };
  /** Idempotency alternative (contract 2); not part of the document. */
  referencia_externa?: string;
};
