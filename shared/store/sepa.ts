/**
 * SEPA credit transfer files (ISO 20022 pain.001.001.03) for seller payouts, one transfer
 * per file. The content depends only on its input, so a retried payout job writes the same
 * file again.
 */

/** What one transfer needs. */
export interface SepaTransfer {
  /** Unique message and end-to-end id (e.g. `SF-PAYOUT-12`). */
  reference: string;
  createdAt: Date;
  debtorName: string;
  debtorIban: string;
  creditorName: string;
  creditorIban: string;
  amountCents: number;
  remittance: string;
}

/** Characters the SEPA Latin subset allows; anything else becomes a space. */
const sepaText = (value: string, max: number) =>
  value
    .normalize("NFKD")
    .replace(/[^A-Za-z0-9/\-?:().,'+ ]/g, " ")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, max) || "NOTPROVIDED";

const amount = (cents: number) => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`;

/** The pain.001.001.03 document for one transfer. */
export function painXml(t: SepaTransfer): string {
  const id = sepaText(t.reference, 35);
  const created = t.createdAt.toISOString().slice(0, 19);
  const date = t.createdAt.toISOString().slice(0, 10);
  return `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.03" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <CstmrCdtTrfInitn>
    <GrpHdr>
      <MsgId>${id}</MsgId>
      <CreDtTm>${created}</CreDtTm>
      <NbOfTxs>1</NbOfTxs>
      <CtrlSum>${amount(t.amountCents)}</CtrlSum>
      <InitgPty><Nm>${sepaText(t.debtorName, 70)}</Nm></InitgPty>
    </GrpHdr>
    <PmtInf>
      <PmtInfId>${id}</PmtInfId>
      <PmtMtd>TRF</PmtMtd>
      <NbOfTxs>1</NbOfTxs>
      <CtrlSum>${amount(t.amountCents)}</CtrlSum>
      <PmtTpInf><SvcLvl><Cd>SEPA</Cd></SvcLvl></PmtTpInf>
      <ReqdExctnDt>${date}</ReqdExctnDt>
      <Dbtr><Nm>${sepaText(t.debtorName, 70)}</Nm></Dbtr>
      <DbtrAcct><Id><IBAN>${t.debtorIban}</IBAN></Id></DbtrAcct>
      <DbtrAgt><FinInstnId><Othr><Id>NOTPROVIDED</Id></Othr></FinInstnId></DbtrAgt>
      <ChrgBr>SLEV</ChrgBr>
      <CdtTrfTxInf>
        <PmtId><EndToEndId>${id}</EndToEndId></PmtId>
        <Amt><InstdAmt Ccy="EUR">${amount(t.amountCents)}</InstdAmt></Amt>
        <Cdtr><Nm>${sepaText(t.creditorName, 70)}</Nm></Cdtr>
        <CdtrAcct><Id><IBAN>${t.creditorIban}</IBAN></Id></CdtrAcct>
        <RmtInf><Ustrd>${sepaText(t.remittance, 140)}</Ustrd></RmtInf>
      </CdtTrfTxInf>
    </PmtInf>
  </CstmrCdtTrfInitn>
</Document>
`;
}
