// The runnable examples of a Markdown document (docs/api.md, "Trying the examples"): each is a
// fenced block whose info string is `sh example` (a shell command, run as written) followed by
// the next fenced block, `http answer` (the status line, the headers that matter, a blank line,
// the body) or `json answer` (the body alone). The answer is compared structurally:
//
// - `"$NAME"` as a whole string value: the first time, the actual value is kept as the shell
//   variable NAME for the commands after it; once kept, the value must be the same.
// - Any other string: `$NAME` inside it is replaced by the kept value; then identifiers, instants,
//   days, access keys, protocols and hashes match any value of the same form (a UUID matches any
//   UUID, `2026-11-24T13:29:13-03:00` any Brasília instant with its offset, and so on), the rest
//   must be equal.
// - `"..."` as a value: any value. As a key (`"...": "..."`): the object may have more keys;
//   without it, the object must have exactly the keys shown. As an array's last item: the array
//   may have more items; without it, exactly the items shown.
// - Headers: each one shown must be present, its value compared as a string above.

/** One example: the command, its expected answer, and where it is in the document. */
export type DocExample = { line: number; command: string; answer: { kind: 'http' | 'json'; text: string } };

const FENCE = /^```([^\n`]*)\n([\s\S]*?)^```[ \t]*$/gm;

/** The examples of `markdown`, in the document's order; throws on an example without its answer. */
export function examplesOf(markdown: string): DocExample[] {
  const blocks = [...markdown.matchAll(FENCE)].map((m) => ({
    info: m[1]!.trim().split(/\s+/),
    text: m[2]!,
    line: markdown.slice(0, m.index).split('\n').length,
  }));
  const examples: DocExample[] = [];
  blocks.forEach((block, i) => {
    if (block.info[1] !== 'example') return;
    const next = blocks[i + 1];
    if (!next || next.info[1] !== 'answer' || (next.info[0] !== 'http' && next.info[0] !== 'json')) {
      throw new Error(`docs, linha ${block.line}: o exemplo não é seguido de um bloco "http answer" ou "json answer"`);
    }
    examples.push({ line: block.line, command: block.text, answer: { kind: next.info[0], text: next.text } });
  });
  return examples;
}

/** An HTTP answer as `curl -i` (or `-D -`) prints it: the last status line, headers, body. */
export type HttpAnswer = { status: number | undefined; headers: Map<string, string>; body: string };

/** Splits curl's output; a `json` answer is the body alone. */
export function parseAnswer(text: string, kind: 'http' | 'json'): HttpAnswer {
  if (kind === 'json') return { status: undefined, headers: new Map(), body: text };
  let rest = text.replace(/\r\n/g, '\n');
  let head = '';
  // `100 Continue` and the like come before the final answer: keep the last head.
  do {
    const end = rest.indexOf('\n\n');
    head = end < 0 ? rest : rest.slice(0, end);
    rest = end < 0 ? '' : rest.slice(end + 2);
  } while (/^HTTP\/\S+ 1\d\d/.test(head) && /^HTTP\//.test(rest));
  const [statusLine = '', ...lines] = head.split('\n');
  const status = /^HTTP\/\S+ (\d{3})/.exec(statusLine)?.[1];
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { status: status === undefined ? undefined : Number(status), headers, body: rest };
}

// The forms a value of the API takes that differ from one run to the next, most specific first.
const FORMS: [RegExp, string][] = [
  [/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>'],
  [/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}-03:00/g, '<instante>'],
  [/\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}/g, '<instante>'],
  [/\d{4}-\d{2}-\d{2}/g, '<dia>'],
  [/\b\d{6}[0-9A-Z]{12}\d{26}\b/g, '<chave>'],
  [/\b[0-9A-F]{40}\b/g, '<hash>'],
  [/\b\d{15}\b/g, '<protocolo>'],
  [/\b\d{14}\b/g, '<cnpj>'],
  [/\b\d{10}\b/g, '<segundos>'],
];

const formOf = (text: string) => FORMS.reduce((s, [pattern, name]) => s.replace(pattern, name), text);

const VARIABLE = /^\$([A-Z_][A-Z0-9_]*)$/;
const ANY = '...';

/** Compares an actual value with the expected one; the differences found, each with its path. */
export function compare(actual: unknown, expected: unknown, vars: Record<string, string>, path = '$'): string[] {
  if (expected === ANY) return [];
  if (typeof expected === 'string') {
    const variable = VARIABLE.exec(expected)?.[1];
    if (variable !== undefined) {
      if (typeof actual !== 'string' && typeof actual !== 'number') return [`${path}: esperava um valor para $${variable}, veio ${JSON.stringify(actual)}`];
      if (vars[variable] === undefined) {
        vars[variable] = String(actual);
        return [];
      }
      return String(actual) === vars[variable] ? [] : [`${path}: esperava $${variable} = ${vars[variable]}, veio ${JSON.stringify(actual)}`];
    }
    const wanted = expected.replace(/\$([A-Z_][A-Z0-9_]*)/g, (whole, name: string) => vars[name] ?? whole);
    return typeof actual === 'string' && formOf(actual) === formOf(wanted)
      ? []
      : [`${path}: esperava ${JSON.stringify(wanted)}, veio ${JSON.stringify(actual)}`];
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${path}: esperava uma lista, veio ${JSON.stringify(actual)}`];
    const open = expected.at(-1) === ANY;
    const items = open ? expected.slice(0, -1) : expected;
    if (open ? actual.length < items.length : actual.length !== items.length) {
      return [`${path}: esperava ${open ? 'ao menos ' : ''}${items.length} itens, vieram ${actual.length}`];
    }
    return items.flatMap((item, i) => compare(actual[i], item, vars, `${path}[${i}]`));
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return [`${path}: esperava um objeto, veio ${JSON.stringify(actual)}`];
    const wanted = expected as Record<string, unknown>;
    const got = actual as Record<string, unknown>;
    const problems = Object.entries(wanted)
      .filter(([key]) => key !== ANY)
      .flatMap(([key, value]) => (key in got ? compare(got[key], value, vars, `${path}.${key}`) : [`${path}.${key}: ausente na resposta`]));
    if (!(ANY in wanted))
      problems.push(
        ...Object.keys(got)
          .filter((key) => !(key in wanted))
          .map((key) => `${path}.${key}: não está no exemplo (${JSON.stringify(got[key])})`),
      );
    return problems;
  }
  return Object.is(actual, expected) ? [] : [`${path}: esperava ${JSON.stringify(expected)}, veio ${JSON.stringify(actual)}`];
}

/** Compares curl's output with the documented answer; the differences, none when it matches. */
export function compareAnswer(output: string, answer: DocExample['answer'], vars: Record<string, string>): string[] {
  const expected = parseAnswer(answer.text, answer.kind);
  const actual = parseAnswer(output, answer.kind);
  const problems: string[] = [];
  if (expected.status !== undefined && actual.status !== expected.status) problems.push(`status: esperava ${expected.status}, veio ${actual.status}`);
  // The body first: the variables it keeps may appear in the headers (Location). An answer shown
  // without a body is one whose body the command wrote elsewhere (`-o`), or that has none.
  if (expected.body.trim() !== '') {
    let body: unknown;
    try {
      body = JSON.parse(actual.body);
    } catch {
      return [...problems, `corpo: não é JSON: ${actual.body.slice(0, 300)}`];
    }
    problems.push(...compare(body, JSON.parse(expected.body), vars));
  }
  for (const [name, value] of expected.headers) {
    const got = actual.headers.get(name);
    if (got === undefined) problems.push(`cabeçalho ${name}: ausente`);
    else problems.push(...compare(got, value, vars, `cabeçalho ${name}`));
  }
  return problems;
}

/** Whether the command only reads (no method, no body): such a command may be repeated. */
export const onlyReads = (command: string): boolean => !/(^|\s)(-X|--request|-d|--data\S*|--json|-T|--upload-file)(\s|=|$)/.test(command);
