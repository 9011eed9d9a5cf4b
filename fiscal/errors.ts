// Errors of the fiscal core. Bad input never crashes and never yields half a document: it throws
// a FieldError that names the offending field (in the path style of the API: `ide.nNF`,
// `det[2].prod.NCM`), so the service can turn it into a 400/422 detail and the terminal can
// show it next to the right input.

export type FieldIssue = { field: string; message: string };

export class FieldError extends Error {
  readonly issues: FieldIssue[];

  constructor(field: string, message: string);
  constructor(issues: FieldIssue[]);
  constructor(a: string | FieldIssue[], message?: string) {
    const issues = typeof a === 'string' ? [{ field: a, message: message ?? 'inválido' }] : a;
    super(issues.map((i) => `${i.field}: ${i.message}`).join('; '));
    this.name = 'FieldError';
    this.issues = issues;
  }

  get field(): string {
    return this.issues[0]?.field ?? '';
  }
}

/** Collects issues across a whole object so the caller sees every problem at once. */
export class IssueCollector {
  readonly issues: FieldIssue[] = [];
  /**
   * The CNPJs the document's checks accepted, by field (assertCnpj records them when given the
   * collector), for the rules that look at every CNPJ of a document at once: the alphanumeric
   * form's start date (fiscal/law/in-force.ts, refuseCnpjsNotYetInForce).
   */
  readonly cnpjs: { field: string; value: string }[] = [];

  add(field: string, message: string): void {
    this.issues.push({ field, message });
  }

  /** Runs `check`, recording a FieldError it throws instead of stopping. */
  capture<T>(check: () => T): T | undefined {
    try {
      return check();
    } catch (err) {
      if (err instanceof FieldError) {
        this.issues.push(...err.issues);
        return undefined;
      }
      throw err;
    }
  }

  throwIfAny(): void {
    if (this.issues.length) throw new FieldError(this.issues);
  }
}
