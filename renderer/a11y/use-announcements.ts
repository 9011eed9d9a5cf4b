// Feeds the stores' changes to the announcement rules (announcements.ts) for as long as the
// checkout screen is up.

import { useEffect } from 'react';
import type { FinishedSale } from '../../electron/api/terminal-api.ts';
import { useSale } from '../state/sale-store.ts';
import { useStatus } from '../state/status-store.ts';
import { announce } from './announcer.ts';
import { receiptNews, saleNews, statusNews } from './announcements.ts';

const finishedReceipt = (f: FinishedSale | null) => (f ? { receipt: f.receipt, changeCents: f.sale.changeCents } : null);

export function useAnnouncements(): void {
  useEffect(() => {
    const stopSale = useSale.subscribe((after, before) => {
      announce(saleNews(before, after));
      if (after.finished !== before.finished) announce(receiptNews(finishedReceipt(before.finished), finishedReceipt(after.finished)));
    });
    const stopStatus = useStatus.subscribe((after, before) => {
      if (after.queue !== before.queue) announce(statusNews(before.queue, after.queue));
    });
    return () => {
      stopSale();
      stopStatus();
    };
  }, []);
}
