// What the screen says to a screen reader without moving the focus: two live regions that stay
// in the page (Announcer.tsx) and keep the last few messages, so a message repeated is announced
// again and nothing said in a burst (an item, then the total) is lost. Polite for the sale's
// news; assertive for what must interrupt (the service gone, the contingency, a rejection).
// Errors next to their field stay role="alert" where they are shown (components/ErrorAlert.tsx).

import { create } from 'zustand';

export type Politeness = 'polite' | 'assertive';
export type Announcement = { text: string; politeness: Politeness };
type Entry = { id: number; text: string };

/** Messages kept in each region: screen readers read additions only, the rest is history. */
const KEEP = 6;

export const useAnnouncer = create<Record<Politeness, Entry[]>>(() => ({ polite: [], assertive: [] }));

let seq = 0;

export function announce(news: Announcement | Announcement[]): void {
  for (const { text, politeness } of Array.isArray(news) ? news : [news]) {
    if (!text) continue;
    useAnnouncer.setState((s) => ({ [politeness]: [...s[politeness], { id: ++seq, text }].slice(-KEEP) }));
  }
}
