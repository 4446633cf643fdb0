/**
 * Every kanban and message route × {owner, team admin, member, viewer, stranger, site admin,
 * super admin, public visitor}: whoever may view the project reads boards and threads and
 * talks in threads; content writers (owner, team admin, member) change boards; authors edit
 * their comments and messages; authors or managers delete them; strangers see nothing.
 * Rows share one world except moves, the card update and deletions, whose cells each get fresh boards and threads.
 */
import t from "tap";
import { attachmentLink } from "../../../shared/attachments/links.ts";
import { insertAttachment } from "../../../shared/attachments/store.ts";
import { assignUser, insertCard } from "../../../shared/kanban/cards.ts";
import { insertComment } from "../../../shared/kanban/comments.ts";
import { insertLabel } from "../../../shared/kanban/labels.ts";
import { insertBoard, listColumns } from "../../../shared/kanban/store.ts";
import { insertThread } from "../../../shared/messages/store.ts";
import { startTestApp, type TestApp } from "../../support/app.ts";
import { buildWorld, content, runMatrix, view, type Expectation, type MatrixRow, type World } from "../../support/matrix.ts";

interface KanbanWorld extends World {
  board: number;
  column: number;
  second: number;
  card: number;
  label: number;
  comment: number;
  assignee: number;
  thread: number;
  message: number;
  download: string;
}

/**
 * The kanban and message rows of a world, written through the stores in one transaction
 * (the users, project and team come from `base`, which no row changes).
 */
async function buildKanbanWorld(app: TestApp, base: World): Promise<KanbanWorld> {
  const owner = base.ids.owner;
  const rows = await app.pool.transaction(async (tx) => {
    const board = await insertBoard(tx, base.project, owner, "B", ["A", "B"]);
    const [column, second] = await listColumns(tx, [board.id]);
    const card = await insertCard(tx, column!, undefined, owner, { title: "C" });
    const label = await insertLabel(tx, board.id, "l", "#123456");
    const comment = await insertComment(tx, card, owner, "c");
    const assignee = (await assignUser(tx, card, base.ids.member, null)).id;
    const { threadId, messageId } = await insertThread(tx, base.project, owner, "s", "m");
    const attachment = await insertAttachment(tx, {
      owner: { messageId },
      userId: owner,
      fileName: "f.txt",
      contentType: "text/plain; charset=utf-8",
      byteSize: 4,
      storageKey: `attachments/matrix/${messageId}`,
    });
    return { board: board.id, column: column!.id, second: second!.id, card, label: label.id, comment, assignee, thread: threadId, message: messageId, attachment: attachment.id };
  });
  await app.deps.storage.put(`attachments/matrix/${rows.message}`, Buffer.from("file"), { contentType: "text/plain; charset=utf-8" });
  return { ...base, ...rows, download: attachmentLink(app.config.appKey, rows.attachment, 60_000).path };
}

const all = (status: number): Expectation => ({ owner: status, teamAdmin: status, member: status, viewer: status, stranger: status, siteAdmin: status, superAdmin: status, publicVisitor: status });
const created: Expectation = { ...content, owner: 201, teamAdmin: 201, member: 201, superAdmin: 201 };
const talk: Expectation = { ...view, owner: 201, teamAdmin: 201, member: 201, viewer: 201, siteAdmin: 201, superAdmin: 201 };
/** Only the author (the owner made the world's comment and message). */
const author: Expectation = { owner: 200, teamAdmin: 403, member: 403, viewer: 403, stranger: 404, siteAdmin: 403, superAdmin: 403, publicVisitor: 404 };
/** The author or a manager of the project; a comment also needs the right to edit content. */
const commentRemover: Expectation = { ...author, teamAdmin: 200, superAdmin: 200 };
const messageRemover: Expectation = { ...author, teamAdmin: 200, superAdmin: 200 };

/** What the kanban and message routes write (allowed cells show that their writes land here). */
const tables = [
  ...["kanban_boards", "kanban_columns", "kanban_cards", "kanban_labels", "kanban_card_labels", "kanban_card_assignees", "kanban_comments", "kanban_activities"],
  ...["message_threads", "messages", "message_thread_reads", "attachments", "audit_log", "outbox_events", "jobs"],
];

const reads: MatrixRow<KanbanWorld>[] = [
  { name: "project boards", method: "GET", path: (w) => `/api/projects/${w.project}/kanban`, expect: view },
  { name: "board", method: "GET", path: (w) => `/api/kanban-boards/${w.board}`, expect: view },
  { name: "board labels", method: "GET", path: (w) => `/api/kanban-boards/${w.board}/labels`, expect: view },
  { name: "card", method: "GET", path: (w) => `/api/kanban-cards/${w.card}`, expect: view },
  { name: "thread", method: "GET", path: (w) => `/api/messages/threads/${w.thread}`, expect: view },
  {
    name: "own threads",
    method: "GET",
    path: () => "/api/messages/threads",
    expect: all(200),
    check: (t, res, w, actor) =>
      t.equal(
        (res.body.data as { id: number }[]).some((x) => x.id === w.thread),
        ["owner", "teamAdmin", "member", "viewer"].includes(actor),
        `${actor}: lists the thread only when the project is theirs`,
      ),
  },
  { name: "download by signed link (the link is the credential)", method: "GET", path: (w) => w.download, expect: all(200) },
];

const writes: MatrixRow<KanbanWorld>[] = [
  { name: "create board", method: "POST", path: (w) => `/api/projects/${w.project}/kanban`, body: () => ({ name: "N", columns: ["x"] }), expect: created },
  { name: "rename board", method: "PUT", path: (w) => `/api/kanban-boards/${w.board}`, body: () => ({ name: "R" }), expect: content },
  { name: "create column", method: "POST", path: () => "/api/kanban-columns", body: (w) => ({ board_id: w.board, name: "N" }), expect: created },
  { name: "update column", method: "PUT", path: (w) => `/api/kanban-columns/${w.second}`, body: () => ({ wip_limit: 3 }), expect: content },
  { name: "create card", method: "POST", path: () => "/api/kanban-cards", body: (w) => ({ column_id: w.column, title: "N" }), expect: created },
  { name: "comment", method: "POST", path: (w) => `/api/kanban-cards/${w.card}/comments`, body: () => ({ body: "hi" }), expect: created },
  { name: "reply", method: "POST", path: (w) => `/api/comments/${w.comment}/replies`, body: () => ({ body: "re" }), expect: created },
  { name: "edit comment", method: "PUT", path: (w) => `/api/comments/${w.comment}`, body: () => ({ body: "e" }), expect: author },
  { name: "assign", method: "POST", path: (w) => `/api/kanban-cards/${w.card}/assignees`, body: (w) => ({ user_id: w.ids.viewer }), expect: created },
  { name: "create label", method: "POST", path: (w) => `/api/kanban-boards/${w.board}/labels`, body: () => ({ name: "n", color: "#000000" }), expect: created },
  { name: "update label", method: "PUT", path: (w) => `/api/kanban-labels/${w.label}`, body: () => ({ name: "u" }), expect: content },
  { name: "start thread", method: "POST", path: () => "/api/messages/threads", body: (w) => ({ subject: "s", project_id: w.project, body: "b" }), expect: talk },
  { name: "post message", method: "POST", path: (w) => `/api/messages/threads/${w.thread}`, body: () => ({ body: "b" }), expect: talk },
  { name: "edit message", method: "PUT", path: (w) => `/api/messages/${w.message}`, body: () => ({ body: "e" }), expect: author },
  // Without a file: the author gets as far as the form's check (the upload itself is in messages.test.ts).
  { name: "attach to message", method: "POST", path: (w) => `/api/messages/${w.message}/attachments`, expect: { ...author, owner: 422 } },
];

/**
 * Changes that a first allowed cell would make for the rest (the card already moved, the
 * title already set), and rows that remove what they name: each cell gets fresh boards and
 * threads, so every allowed cell shows its own write.
 */
const fresh: MatrixRow<KanbanWorld>[] = [
  { name: "move (project path)", method: "POST", path: (w) => `/api/projects/${w.project}/kanban/cards/${w.card}/move`, body: (w) => ({ column_id: w.second, order: 0 }), expect: content },
  { name: "update card", method: "PUT", path: (w) => `/api/kanban-cards/${w.card}`, body: () => ({ title: "U" }), expect: content },
  { name: "move card", method: "POST", path: (w) => `/api/kanban-cards/${w.card}/move`, body: (w) => ({ column_id: w.second, order: 0 }), expect: content },
  { name: "delete column", method: "DELETE", path: (w) => `/api/kanban-columns/${w.second}`, expect: content },
  { name: "delete card", method: "DELETE", path: (w) => `/api/kanban-cards/${w.card}`, expect: content },
  { name: "delete comment", method: "DELETE", path: (w) => `/api/comments/${w.comment}`, expect: commentRemover },
  { name: "unassign", method: "DELETE", path: (w) => `/api/assignees/${w.assignee}`, expect: content },
  { name: "delete label", method: "DELETE", path: (w) => `/api/kanban-labels/${w.label}`, expect: content },
  { name: "delete message", method: "DELETE", path: (w) => `/api/messages/${w.message}`, expect: messageRemover },
];

t.test("kanban and message authorization matrix", async (t) => {
  const app = await startTestApp(t);
  // Users, project and team are shared (no row changes them). Reads and changes that every
  // cell makes anew share one board and thread; moves, the card update and deletions get
  // their own per cell.
  const base = await buildWorld(app.pool);
  const shared = buildKanbanWorld(app, base);
  // No worker runs: nothing else writes while a cell's fingerprints are taken.
  await runMatrix(t, app.url, [...reads, ...writes], () => shared, app.pool, { effects: true, tables });
  await runMatrix(t, app.url, fresh, () => buildKanbanWorld(app, base), app.pool, { effects: true, tables });
});
