-- The PIX loop's questions (electron/core/pix/pix-store.ts) by index: every round it asks which
-- charges are due (state among the worked ones, next_try_at due and not NEVER), when the next one
-- is, which are open, how many wait for the manager, and which second PIX refunds are due. The
-- first index covered only the unsettled states, so once charges were watched after the cashier
-- gave up or after they finished (states cancelled/expired/finished), each round read the whole
-- table, which grows by one row per PIX sale for years. (state, next_try_at) serves them all;
-- a finished charge's next_try_at is NEVER, past every range the loop reads.
DROP INDEX pix_charges_due;
CREATE INDEX pix_charges_state_due ON pix_charges (state, next_try_at);
CREATE INDEX pix_second_payments_due ON pix_second_payments (next_try_at);
CREATE INDEX pix_second_payments_charge ON pix_second_payments (txid, paid_at);
