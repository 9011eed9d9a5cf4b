// The NF-e de devolução (model 55, finNFe 4, tpNF 0) request: which NFC-e, which of its items and
// how much of each come back, why, and who brings them. Field names are the API's (Portuguese
// snake_case, docs/api.md, "NFC-e"), so a FieldError names the field the caller sent
// (`itens[0].quantidade`). Quantities are decimal strings with a dot, up to 4 places.

export type DevolucaoItem = {
  /** nItem of the item in the NFC-e (1-based, as written in det/@nItem). */
  numero_item: number;
  /** How much of it comes back, in the item's commercial unit (uCom): "1", "0.350". */
  quantidade: string;
};

/** Where the person returning the goods lives; its UF decides idDest (1 same UF, 2 another). */
export type DevolucaoEndereco = {
  logradouro: string;
  numero: string;
  complemento?: string;
  bairro: string;
  /** 7-digit IBGE code, of a municipality of `uf`. */
  codigo_municipio: string;
  municipio: string;
  uf: string;
  /** 8 digits. */
  cep?: string;
  telefone?: string;
};

/**
 * The person returning the goods (dest of the NF-e). Required when the NFC-e identified no
 * consumer; otherwise it may only repeat that consumer's document and add a name and address.
 */
export type DevolucaoDestinatario = {
  cpf?: string;
  cnpj?: string;
  nome?: string;
  endereco?: DevolucaoEndereco;
};

export type DevolucaoRequest = {
  /** Access key of the authorized NFC-e the goods were sold with. */
  chave_nfce: string;
  itens: DevolucaoItem[];
  /** Why the goods came back: 15 to 255 characters, printed in infAdic/infCpl. */
  justificativa: string;
  destinatario?: DevolucaoDestinatario;
  /** Idempotency key in the body (docs/api.md, "Idempotency"); not part of the document. */
  referencia_externa?: string;
};
