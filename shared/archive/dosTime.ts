/**
 * MS-DOS date and time as ZIP headers store them: local wall-clock time, two-second
 * resolution, years 1980–2107. Readers that know the "UT" extra field (Info-ZIP unzip, yauzl)
 * prefer the exact UTC seconds we also write; the DOS fields are what everything else shows.
 */

/** A DOS timestamp split into its two 16-bit header fields. */
export interface DosDateTime {
  /** bits 15–9 year − 1980, 8–5 month, 4–0 day. */
  date: number;
  /** bits 15–11 hours, 10–5 minutes, 4–0 seconds / 2. */
  time: number;
}

const earliest: DosDateTime = { date: (1 << 5) | 1, time: 0 }; // 1980-01-01 00:00:00
const latest: DosDateTime = { date: (127 << 9) | (12 << 5) | 31, time: (23 << 11) | (59 << 5) | 29 }; // 2107-12-31 23:59:58

/** Converts a Date to DOS fields in the process's local time zone, clamped to the DOS range. */
export function toDosDateTime(when: Date): DosDateTime {
  const year = when.getFullYear();
  if (!Number.isFinite(year) || year < 1980) return earliest;
  if (year > 2107) return latest;
  return {
    date: ((year - 1980) << 9) | ((when.getMonth() + 1) << 5) | when.getDate(),
    time: (when.getHours() << 11) | (when.getMinutes() << 5) | (when.getSeconds() >> 1),
  };
}

/** Whole Unix seconds for the "UT" extra field, or null when they do not fit its signed 32 bits. */
export function toUnixSeconds(when: Date): number | null {
  const seconds = Math.floor(when.getTime() / 1000);
  return Number.isFinite(seconds) && seconds >= 0 && seconds <= 0x7fffffff ? seconds : null;
}
