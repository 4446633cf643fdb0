/**
 * What a layout write of a window needs to know before it writes (the window, its set, the
 * project's grid, the schema key of its placements), kept per process after a write by the
 * set's creator, so that the next write of the window (a designer's drags come in bursts)
 * can skip the read and send only the write, guarded by `contextGuard` (layoutWrite.ts).
 *
 * Glossary: a *snapshot* is that context as of the last write this process made, with the
 * row versions (`xmin`) of the window and the set it was read at. The guard re-checks in the
 * write statement that those rows are unchanged, that the grid and the schema key are the
 * same and that the user still has form designer access; if anything differs the statement
 * writes nothing and the route reads everything again, so a snapshot never decides anything
 * on its own. A snapshot also holds the window's elements as written (their values as batch
 * text and their dates): while the guard holds no element was written since, because every
 * element write bumps the window's row (shared/forms/elements.ts).
 */
import { LRUCache } from "lru-cache";
import type { FormSetRow, FormWindowRow } from "./rows.ts";

export interface WindowSnapshot {
  /** The set's creator, who wrote with this context (only the creator writes). */
  userId: number;
  set: FormSetRow;
  window: FormWindowRow;
  /** The window's and the set's row versions (`xmin` as text). */
  windowXmin: string;
  setXmin: string;
  /** The project's grid size when it snaps to the grid, else null. */
  grid: number | null;
  /** The schema key of the set's placements (schemaFieldsCache.ts); null without a project. */
  schemaKey: string | null;
  /** The window's elements by id, as written. */
  elements: ReadonlyMap<number, RememberedElement>;
}

/** An element as the last write left it: its values as batch text (without the id) and its dates. */
export interface RememberedElement {
  text: string;
  created_at: Date;
  updated_at: Date;
}

/** Elements the snapshots hold at most, over all windows (~250 bytes each). */
export const WINDOW_SNAPSHOT_ELEMENTS = 100_000;

const snapshots = new LRUCache<number, WindowSnapshot>({
  max: 10_000,
  maxSize: WINDOW_SNAPSHOT_ELEMENTS,
  sizeCalculation: (snapshot) => 1 + snapshot.elements.size,
});

/** The snapshot of window `windowId` if `userId` wrote it last from this process at `version`. */
export function windowSnapshot(windowId: number, userId: number, version: number): WindowSnapshot | undefined {
  const snapshot = snapshots.get(windowId);
  return snapshot && snapshot.userId === userId && snapshot.window.version === version ? snapshot : undefined;
}

/** Keeps `snapshot` for window `snapshot.window.id` (after a write that checked it). */
export function rememberWindowSnapshot(snapshot: WindowSnapshot): void {
  snapshots.set(snapshot.window.id, snapshot);
}

/** Drops window `windowId`'s snapshot (a write found it out of date, or the route answered an error). */
export function forgetWindowSnapshot(windowId: number): void {
  snapshots.delete(windowId);
}
