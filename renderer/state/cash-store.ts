// The till as the screen knows it: the open session (null: closed), loaded at start and replaced
// by the answer of every till action, and the session just closed, whose closing the dialog
// shows until the cashier moves on.

import { create } from 'zustand';
import type { CashMovementInput, CashSessionView, CloseCashInput, OpenCashInput } from '../../electron/api/terminal-api.ts';
import { asFailure, type TerminalFailure } from '../api/terminal-failure.ts';
import { terminal } from './terminal.ts';

type CashState = {
  /** False until the first answer: the screen does not claim the till is closed before it knows. */
  loaded: boolean;
  session: CashSessionView | null;
  /** The session just closed (its closing), shown until dismissed. */
  closed: CashSessionView | null;
  loadError: TerminalFailure | null;
};

export const useCash = create<CashState>(() => ({ loaded: false, session: null, closed: null, loadError: null }));

/** Known closed (not merely unknown yet): no sale can be made until it is opened. */
export const tillKnownClosed = (s: CashState): boolean => s.loaded && s.session === null;

// Bumped by every till action as it starts and ends: a reading of the session taken before an
// action answered is older than that answer, and is dropped.
let generation = 0;

export async function loadCash(): Promise<void> {
  const asked = ++generation;
  try {
    const session = await terminal().cashSession();
    if (asked === generation) useCash.setState({ session, loaded: true, loadError: null });
  } catch (err) {
    if (asked === generation) useCash.setState({ loadError: asFailure(err) });
  }
}

/** Runs a till action; its failure is returned (for the form to show), never thrown. */
async function act(work: () => Promise<void>): Promise<TerminalFailure | null> {
  generation++;
  try {
    await work();
    return null;
  } catch (err) {
    return asFailure(err);
  } finally {
    generation++;
  }
}

export const openCash = (input: OpenCashInput) =>
  act(async () => {
    useCash.setState({ session: await terminal().openCashSession(input), closed: null });
  });

export const addMovement = (input: CashMovementInput) =>
  act(async () => {
    useCash.setState({ session: await terminal().addCashMovement(input) });
  });

export const closeCash = (input: CloseCashInput) =>
  act(async () => {
    useCash.setState({ session: null, closed: await terminal().closeCashSession(input) });
  });

export const printAgain = (sessionId: string) =>
  act(async () => {
    useCash.setState({ closed: await terminal().printCashReport(sessionId) });
  });

export function dismissClosed(): void {
  useCash.setState({ closed: null });
}

/** The sale could not finish because the till is closed: the screen follows the core. */
export function tillFoundClosed(): void {
  useCash.setState({ session: null });
}
