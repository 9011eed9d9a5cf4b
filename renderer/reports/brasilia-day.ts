// Today as a Brasília calendar day (AAAA-MM-DD): the reports' and the export's default period.
// en-CA formats dates as ISO does.

const DAY = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo', year: 'numeric', month: '2-digit', day: '2-digit' });

export function brasiliaToday(now: Date = new Date()): string {
  return DAY.format(now);
}

/** The first day of the month of `day` (AAAA-MM-01). */
export function firstOfMonth(day: string): string {
  return `${day.slice(0, 8)}01`;
}
