// What a cashier or a manager reads when the issuance service says no. The service's own
// `message` is written for integrators (it names endpoints and fields of its API), so it never
// reaches the screen: each error code the service can return (docs/api.md, "Errors") has its
// words here, saying what happened and what to do. The field details of a `validacao` are the
// fiscal core's own checks (which item, which field, why): they are kept, with the API's paths
// (`det[0].prod.NCM`) said the way the screen says them ("item 1, NCM").

import type { Failure, HttpFailure } from './failures.ts';
import type { ErrorCode } from '../../base/common/api/errors.ts';

/** What the terminal was asking the service for when it said no. */
export type ServiceOperation = 'emitir' | 'consultar' | 'cancelar' | 'substituir' | 'inutilizar' | 'devolucao';

const OBJECT: Record<ServiceOperation, string> = {
  emitir: 'a NFC-e',
  consultar: 'a consulta da NFC-e',
  cancelar: 'o cancelamento',
  substituir: 'o cancelamento por substituição',
  inutilizar: 'a inutilização do número',
  devolucao: 'a devolução',
};

const SUPPORT = 'avise o suporte do Balcão';

/**
 * Every error code of the service, in the screen's words. The type check keeps this table and
 * the contract's list (base/common/api/errors.ts) equal: a code missing here, or one the
 * service cannot answer, does not compile.
 */
export const SERVICE_ERROR_WORDS = {
  requisicao_invalida: `o pedido do terminal saiu num formato que o serviço não aceita (um defeito do terminal: ${SUPPORT})`,
  nao_autorizado: 'o token de acesso deste terminal não vale mais: o gerente deve conferir o token em Configurações',
  nao_encontrado: 'o serviço não encontrou o documento (confira se o terminal está ligado ao serviço e à empresa certos, em Configurações)',
  metodo_nao_permitido: 'o serviço não aceita este pedido neste endereço (um defeito do terminal, ou um serviço de outra versão: avise o suporte do Balcão)',
  em_processamento: 'o mesmo pedido ainda está em andamento no serviço; o terminal aguarda o resultado',
  serie_em_uso: 'a série desta NFC-e é de outro caixa da empresa: o gerente deve escolher outra série em Configurações',
  payload_muito_grande: 'o documento ficou grande demais para o serviço: divida a venda em duas',
  uri_muito_longa: `o pedido do terminal saiu num formato que o serviço não aceita (um defeito do terminal: ${SUPPORT})`,
  cabecalhos_muito_grandes: `o pedido do terminal saiu num formato que o serviço não aceita (um defeito do terminal: ${SUPPORT})`,
  tempo_esgotado: 'o pedido demorou demais para chegar ao serviço (rede lenta); o terminal tenta de novo sozinho',
  tipo_de_conteudo_invalido: `o pedido do terminal saiu num formato que o serviço não aceita (um defeito do terminal: ${SUPPORT})`,
  chave_idempotencia_reutilizada: `o serviço já recebeu outro documento com a mesma referência deste terminal (um defeito do terminal: ${SUPPORT})`,
  prazo_expirado: 'o prazo terminou',
  estado_invalido: 'o documento não está, no serviço, na situação que esta operação pede',
  csc_nao_configurado:
    'a empresa não tem o CSC (código de segurança do QR Code) cadastrado no serviço de emissão: peça ao responsável pelo serviço que o cadastre',
  validacao: 'a SEFAZ não aceitaria os dados do documento',
  erro_interno: 'o serviço de emissão teve uma falha interna; o terminal tenta de novo sozinho',
  autoridade_indisponivel: 'a SEFAZ não está respondendo; o terminal tenta de novo sozinho (e, com o certificado configurado, emite em contingência)',
  servico_indisponivel:
    'o serviço de emissão está indisponível por um momento (reiniciando, sem acesso ao seu banco de dados, ou com um problema no computador dele, como o disco cheio, que o responsável pelo serviço precisa resolver); o terminal tenta de novo sozinho',
} as const satisfies Record<ErrorCode, string>;

export type KnownServiceError = keyof typeof SERVICE_ERROR_WORDS;

const isKnown = (code: string): code is KnownServiceError => Object.hasOwn(SERVICE_ERROR_WORDS, code);

/** The words for a deadline that passed, by operation. */
function deadlineWords(operation: ServiceOperation): string {
  if (operation === 'cancelar') return 'o prazo de cancelamento (30 minutos após a autorização) terminou: para desfazer a venda, faça a devolução';
  if (operation === 'substituir')
    return 'o prazo do cancelamento por substituição (168 horas após a autorização) terminou: para desfazer a venda, faça a devolução';
  return 'o prazo para esta operação terminou';
}

/** `det[2].prod.NCM` → "item 3, NCM"; `pag[0].card.cAut` → "pagamento 1, cAut". */
export function fieldForPeople(path: string): string {
  const parts: string[] = [];
  const re = /([A-Za-z_]+)(?:\[(\d+)\])?/g;
  const segments = [...path.matchAll(re)];
  segments.forEach(([, name, index], i) => {
    const n = index === undefined ? '' : ` ${Number(index) + 1}`;
    if (name === 'det') parts.push(`item${n}`);
    else if (name === 'pag' || name === 'detPag') parts.push(`pagamento${n}`);
    else if (name === 'dest') parts.push('consumidor');
    else if (name === 'itens') parts.push(`item${n}`);
    else if (name === 'destinatario') parts.push('destinatário');
    // Grouping names say nothing to a person; the last segment (the field) always shows.
    else if (i === segments.length - 1 || !['prod', 'imposto', 'card', 'ide', 'total', 'ICMSTot', 'enderDest'].includes(name!)) parts.push(`${name}${n}`);
  });
  return parts.join(', ') || path;
}

/** The service's refusal of `operation`, as the screen shows it. */
export function refusalForPeople(operation: ServiceOperation, f: HttpFailure): string {
  // The authority's own words (cStat and xMotivo) are meant for people; the service's are not.
  if (f.rejeicao) return `A SEFAZ recusou ${OBJECT[operation]} (${f.rejeicao.cStat}): ${f.rejeicao.xMotivo.replace(/\.$/, '')}.`;
  const words =
    f.code === 'prazo_expirado'
      ? deadlineWords(operation)
      : isKnown(f.code)
        ? SERVICE_ERROR_WORDS[f.code]
        : `o serviço respondeu com um erro que o terminal não conhece (HTTP ${f.status}, ${f.code}): ${SUPPORT}`;
  const details = f.code === 'validacao' && f.details.length ? ` (${f.details.map((d) => `${fieldForPeople(d.field)}: ${d.message}`).join('; ')})` : '';
  return `O serviço de emissão recusou ${OBJECT[operation]}: ${words}${details}.`;
}

/**
 * A failure the terminal will retry by itself, as the status bar shows it: the service's
 * silence (network) or a transient answer. Network failures keep their kind ("conexão
 * recusada"), which is the terminal's own wording (api-client.ts).
 */
export function transientForPeople(f: Failure): string {
  if (f.kind === 'network') return f.message;
  if (isKnown(f.code)) return `Serviço de emissão: ${SERVICE_ERROR_WORDS[f.code]}.`;
  return `Serviço de emissão respondeu HTTP ${f.status}; o terminal tenta de novo sozinho.`;
}
