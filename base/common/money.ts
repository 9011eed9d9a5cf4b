// Money as people in Brazil read it, on the screen, on receipts and in reports: integer cents
// in, "1.234,56" out, by string arithmetic (a float never touches an amount). Parsing what is
// typed belongs to whoever reads it: the fiscal core takes decimal strings ("12.50"), the
// screen what the cashier types ("12,50").

/** 1234567 → "12.345,67"; negative amounts keep their sign ("-0,50"). */
export function formatBRL(cents: bigint | number): string {
  if (typeof cents === 'number' && !Number.isSafeInteger(cents)) throw new RangeError(`centavos devem ser um inteiro: ${cents}`);
  const negative = cents < 0;
  const digits = (negative ? -BigInt(cents) : BigInt(cents)).toString().padStart(3, '0');
  const int = digits.slice(0, -2).replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return `${negative ? '-' : ''}${int},${digits.slice(-2)}`;
}
