import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { currentPatronPeriod, isPatron } from "../../../shared/patrons/membership.ts";
import { freshDatabase } from "../../support/db.ts";
import { buildUser, makePatron } from "../../support/factories.ts";

t.test("a user is a patron exactly while a membership period covers the instant", async (t) => {
  const { pool } = await freshDatabase(t);
  const member = await buildUser(pool);
  const stranger = await buildUser(pool);
  t.equal(await isPatron(pool, member.id), false, "no period: not a patron");

  await makePatron(pool, member.id, { level: 2, days: 30 });
  t.equal(await isPatron(pool, member.id), true, "inside the period");
  t.equal(await isPatron(pool, stranger.id), false, "another user's period does not count");
  t.equal(await isPatron(pool, member.id, new Date(Date.now() + 31 * 86_400_000)), false, "after expires_at");
  t.equal(await isPatron(pool, member.id, new Date(Date.now() - 86_400_000)), false, "before started_at");

  await makePatron(pool, member.id, { level: 3, days: 10 });
  t.equal((await currentPatronPeriod(pool, member.id))?.level, 3, "overlapping periods: the highest level wins");
  t.equal((await currentPatronPeriod(pool, member.id, new Date(Date.now() + 20 * 86_400_000)))?.level, 2, "the lower level still covers its own days");

  await pool.query(sql.type(z.object({}))`update patron_memberships set cancelled_at = now() where user_id = ${member.id}`);
  t.equal(await isPatron(pool, member.id), true, "a cancelled period stays valid until it expires");
});

t.test("a period must end after it starts", async (t) => {
  const { pool } = await freshDatabase(t);
  const user = await buildUser(pool);
  await t.rejects(
    pool.query(sql.type(z.object({}))`insert into patron_memberships (user_id, level, started_at, expires_at) values (${user.id}, 1, now(), now())`),
    "an empty period is refused by the table",
  );
});
