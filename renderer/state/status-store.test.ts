import { describe, expect, it } from 'vitest';
import type { ContingencyStatus, PrinterStatusView, QueueStatus } from '../../electron/api/terminal-api.ts';
import type { ScreenTerminal } from '../api/connect.ts';
import { contingencyAction, contingencyChanged, printerChanged, queueChanged, queueMoved, refreshPrinter, refreshQueue, useStatus } from './status-store.ts';
import { setTerminal } from './terminal.ts';

const contingency = (active: boolean) => ({ active, openTasks: [] }) as unknown as ContingencyStatus;
const queue = (pending: number, active = false) => ({ pending, contingency: contingency(active) }) as unknown as QueueStatus;

describe('the status bar and the events that overtake an answer', () => {
  it('a queue status or a contingency event newer than a fetched queue status stays', async () => {
    useStatus.setState({ queue: queue(0) });
    let answer!: (q: QueueStatus) => void;
    setTerminal({ queueStatus: () => new Promise<QueueStatus>((resolve) => (answer = resolve)) } as unknown as ScreenTerminal);
    const refreshed = refreshQueue();
    queueChanged(queue(3));
    contingencyChanged(contingency(true));
    answer(queue(1));
    await refreshed;
    expect(useStatus.getState().queue).toMatchObject({ pending: 3, contingency: { active: true } });
  });

  it("a contingency command's answer does not undo the status event that overtook it", async () => {
    useStatus.setState({ queue: queue(0, false) });
    let answer!: (c: ContingencyStatus) => void;
    const entering = contingencyAction(() => new Promise<ContingencyStatus>((resolve) => (answer = resolve)));
    contingencyChanged({ ...contingency(true), pending: 2 } as ContingencyStatus);
    answer({ ...contingency(true), pending: 0 } as ContingencyStatus);
    await entering;
    expect(useStatus.getState().queue?.contingency).toMatchObject({ active: true, pending: 2 });
  });

  it('the queue is fetched again after the events that move it, once for a burst of them', async () => {
    useStatus.setState({ queue: queue(0) });
    let calls = 0;
    setTerminal({ queueStatus: async () => queue(++calls) } as unknown as ScreenTerminal);
    for (let i = 0; i < 5; i++) queueMoved(5);
    await expect.poll(() => useStatus.getState().queue?.pending).toBe(1);
    queueMoved(5);
    await expect.poll(() => useStatus.getState().queue?.pending).toBe(2);
    expect(calls).toBe(2);
  });

  it('a printer event newer than a fetched printer status stays', async () => {
    let answer!: (p: PrinterStatusView) => void;
    setTerminal({ printerStatus: () => new Promise<PrinterStatusView>((resolve) => (answer = resolve)) } as unknown as ScreenTerminal);
    const refreshed = refreshPrinter();
    printerChanged({ ready: false, problem: 'sem papel' } as PrinterStatusView);
    answer({ ready: true, problem: null } as PrinterStatusView);
    await refreshed;
    expect(useStatus.getState().printer).toMatchObject({ ready: false, problem: 'sem papel' });
  });
});
