/**
 * IBAN validation (ISO 13616): country code, check digits by MOD 97-10, and the length each
 * SEPA-area country prescribes.
 */
const lengths: Record<string, number> = {
  AD: 24, AT: 20, BE: 16, BG: 22, CH: 21, CY: 28, CZ: 24, DE: 22, DK: 18, EE: 20, ES: 24, FI: 18, FR: 27, GB: 22, GI: 23,
  GR: 27, HR: 21, HU: 28, IE: 22, IS: 26, IT: 27, LI: 21, LT: 20, LU: 20, LV: 21, MC: 27, MT: 31, NL: 18, NO: 15, PL: 28,
  PT: 25, RO: 24, SE: 24, SI: 19, SK: 24, SM: 27, VA: 22,
};

/** The IBAN without spaces, upper-case. */
export const normalizeIban = (iban: string) => iban.replace(/\s+/g, "").toUpperCase();

/** Whether `iban` is a valid IBAN. */
export function isValidIban(iban: string): boolean {
  const value = normalizeIban(iban);
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(value)) return false;
  const expected = lengths[value.slice(0, 2)];
  if (expected !== undefined && value.length !== expected) return false;
  const rearranged = value.slice(4) + value.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const digits = /\d/.test(char) ? char : String(char.charCodeAt(0) - 55);
    for (const digit of digits) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder === 1;
}

/** `DE89 **** **** **** **30 00` style, for showing a stored IBAN. */
export const maskIban = (iban: string) => {
  const v = normalizeIban(iban);
  return `${v.slice(0, 4)}${"*".repeat(Math.max(0, v.length - 8))}${v.slice(-4)}`;
};
