/**
 * Processes one seller payout (shared/store/payouts.ts): earnings are attached in one
 * transaction, then the SEPA transfer file is written under a key and with content fixed by
 * the payout, then the payout is marked sent. A job killed between the steps is retried and
 * finds the earnings attached: it writes the same file again and pays nothing twice. A
 * payout whose seller has no valid IBAN any more fails before taking earnings.
 */
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { payoutsProcess } from "../../shared/jobs/kinds.ts";
import { attachEarnings, failPayout, lockPayout, markSent } from "../../shared/store/payouts.ts";
import { payoutIban } from "../../shared/store/sellers.ts";
import { painXml } from "../../shared/store/sepa.ts";
import { defineTask } from "../defineTask.ts";

const creditorRow = z.object({ name: z.string(), bank_account_holder: z.string().nullable() });

export default defineTask(payoutsProcess, async (payload, { deps, log }) => {
  const { pool, config, storage } = deps;
  const payout = await pool.transaction(async (tx) => {
    const current = await lockPayout(tx, payload.payout_id);
    // A seller may remove the IBAN after asking: the payout fails and the earnings stay pending
    // (a transfer file without a creditor account was written and the payout marked sent).
    if (current?.status === "requested" && !(await payoutIban(tx, config.appKey, current.seller_id))) {
      return failPayout(tx, current.id, "The seller profile has no valid IBAN; the earnings stay pending for a later payout.");
    }
    return attachEarnings(tx, payload.payout_id, config.store.payoutHoldDays);
  });
  if (!payout) return { skipped: "payout not found" };
  if (payout.status !== "processing") return { status: payout.status };
  if (!config.store.debtorIban) {
    log.warn({ payout: payout.id }, "PAYOUT_DEBTOR_IBAN is not set: no transfer file; an administrator marks the payout paid");
    return { status: payout.status, transfer_file: false };
  }
  const creditor = await pool.one(sql.type(creditorRow)`select name, bank_account_holder from users where id = ${payout.seller_id}`);
  const creditorIban = await payoutIban(pool, config.appKey, payout.seller_id);
  if (!creditorIban) {
    log.warn({ payout: payout.id }, "the seller's IBAN is gone: no transfer file; an administrator settles the payout");
    return { status: payout.status, transfer_file: false };
  }
  const key = `payouts/${payout.id}/pain.001.xml`;
  const xml = painXml({
    reference: `SF-PAYOUT-${payout.id}`,
    createdAt: payout.processed_at!,
    debtorName: config.store.debtorName,
    debtorIban: config.store.debtorIban,
    creditorName: creditor.bank_account_holder || creditor.name,
    creditorIban,
    amountCents: payout.transferred_cents!,
    remittance: `Template store payout ${payout.id}`,
  });
  await storage.put(key, Buffer.from(xml), { contentType: "application/xml" });
  await pool.transaction(async (tx) => {
    await lockPayout(tx, payout.id);
    await markSent(tx, payout.id, key);
  });
  log.info({ payout: payout.id, cents: payout.transferred_cents }, "payout transfer file stored");
  return { status: "sent", transferred_cents: payout.transferred_cents, transfer_file: key };
});
