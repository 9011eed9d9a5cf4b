// Time as the code takes it: a Clock is injected wherever "now" matters (the terminal's windows
// and deadlines, the tests that move time), and instants are stored as ISO 8601 in UTC.

/** Milliseconds since the epoch; `Date.now` in production, a fake one in tests. */
export type Clock = () => number;

/** The instant as stored: ISO 8601 in UTC with milliseconds (`2026-11-22T17:03:05.123Z`). */
export const iso = (ms: number): string => new Date(ms).toISOString();
