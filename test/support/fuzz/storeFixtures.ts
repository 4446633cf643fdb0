/**
 * The template store of a fixture world (`world.ts`), made on first use through the API as a
 * seller and a buyer would: the owner's seller profile, a draft, a published and a held
 * (submitted, a copy the plagiarism check stopped) store template of the owner's, another
 * seller with templates for sale and one the owner bought, that seller's purchase of the
 * owner's template (the owner's earnings) and review of it (for the owner's vote), an
 * image of the owner's published template, and a payout of the earnings requested through
 * the API and then processed and sent as the payouts job does (the fuzz runs no worker).
 *
 * Each packaged template has text of its own: every world publishes into one store, and a
 * package like another world's would be held by the plagiarism check instead of published.
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { grantCredits } from "../../../shared/credits/ledger.ts";
import { sql } from "../../../shared/db/pool.ts";
import { PostgresStorage } from "../../../shared/storage/postgresStorage.ts";
import { attachEarnings, lockPayout, markSent } from "../../../shared/store/payouts.ts";
import { painXml } from "../../../shared/store/sepa.ts";
import { buildTemplate } from "../templateFactories.ts";
import { buildUser, tokenFor } from "../factories.ts";
import { VALID_IBAN } from "../storeFactories.ts";
import { png, upload } from "./sampleFiles.ts";
import type { FixtureContext, Person } from "./world.ts";

/** Credits a published store template of the world costs: 300 × 10 cents × 70 % is 21 € of earnings, above the 20 € payout minimum. */
const PRICE_CREDITS = 300;

/** PAYOUT_HOLD_DAYS under tests (the default): earnings older than this go into a payout. */
const PAYOUT_HOLD_DAYS = 14;

/** World kinds of the `{id}` of store routes, by documented path (the first match wins). */
export const STORE_ROUTE_KINDS: [RegExp, string][] = [
  [/^\/api\/store\/templates\/\{id\}\/publish$/, "storeDraft"],
  [/^\/api\/store\/templates\/\{id\}\/reviews$/, "storeBought"],
  [/^\/api\/store\/templates\/\{id\}/, "storeTemplate"],
  [/^\/api\/admin\/store\/templates\/\{id\}/, "storeHeld"],
  [/^\/api\/admin\/store\/purchases\/\{id\}/, "storePurchase"],
  [/^\/api\/store\/media\/\{id\}/, "storeMedia"],
  [/^\/api\/reviews\/\{id\}/, "storeReview"],
  [/^\/api\/admin\/payouts\/\{id\}\/mark-paid$/, "payoutProcessed"],
  [/^\/api\/admin\/payouts\/\{id\}\/transfer-file$/, "payoutSent"],
];

/**
 * Store routes anyone signed in may use on the owner's resources, as `METHOD /documented/path`:
 * a published template, its media and reviews are public, and anyone who can see a review
 * may mark it helpful. A stranger's success there is no leak.
 */
export const STORE_OPEN_ROUTES: RegExp[] = [
  /^GET \/api\/store\/templates\/\{id\}(\/reviews)?$/,
  /^GET \/api\/store\/media\/\{id\}$/,
  /^POST \/api\/reviews\/\{id\}\/vote$/,
];

/** The store fixtures of one world. */
export class StoreFixtures {
  private readonly ctx: FixtureContext;
  /** The other seller, made once. */
  private seller?: Promise<Person>;
  /** The owner's purchase of `storeBought`. */
  private purchaseId?: number;

  constructor(ctx: FixtureContext) {
    this.ctx = ctx;
  }

  /** The id of a store kind, or null when `kind` is not one. */
  make(kind: string): Promise<number | undefined> | null {
    const { ctx } = this;
    const owner = ctx.owner;
    switch (kind) {
      case "seller":
        return this.becomeSeller(kind, owner).then((ok) => (ok ? owner.id : undefined));
      case "storeSource":
        return this.source(owner.id);
      case "storeDraft":
        // A package of its own: publishing it is no copy of the world's published one.
        return this.draft(kind, owner, [() => this.source(owner.id)]);
      case "storeTemplate":
        return this.published(kind, owner, () => ctx.need("storeSource"));
      case "storeHeld":
        // Submitted for publishing, held: a copy of the owner's published package is a possible duplicate (409), which leaves it in review.
        return (async () => {
          await ctx.need("storeTemplate");
          const id = await this.draft(kind, owner, [() => ctx.need("storeSource")]);
          if (id === undefined) return undefined;
          return (await ctx.call(kind, "POST", `/api/store/templates/${id}/publish`, {}, () => id, { token: owner.token, expect: 409 })) ?? undefined;
        })();
      case "storeForSale":
        // The owner can afford it (POST /store/purchase names it).
        return this.afford(owner.id).then(() => this.otherSellers(kind));
      case "storeBought":
        return (async () => {
          const forSale = await this.otherSellers(kind);
          if (forSale === undefined) return undefined;
          await this.afford(owner.id);
          return ctx.call(kind, "POST", "/api/store/purchase", { template_id: forSale }, (b) => {
            this.purchaseId = b.purchase.id;
            return b.purchase.template.id;
          });
        })();
      case "storePurchase":
        return ctx.need("storeBought").then(() => this.purchaseId);
      case "storeSale":
        // The other seller buys the owner's template: a sale, and earnings of the owner's.
        return (async () => {
          const template = await ctx.need("storeTemplate");
          const buyer = await this.otherSeller();
          await this.afford(buyer.id);
          return ctx.call(kind, "POST", "/api/store/purchase", { template_id: template }, (b) => b.purchase.id, { token: buyer.token });
        })();
      case "storeReview":
        return (async () => {
          await ctx.need("storeSale");
          const buyer = await this.otherSeller();
          return ctx.call(kind, "POST", `/api/store/templates/${await ctx.need("storeTemplate")}/reviews`, { rating: 4, comment: "Works." }, (b) => b.review.id, { token: buyer.token });
        })();
      case "storeMedia":
        return (async () =>
          ctx.call(kind, "POST", `/api/store/templates/${await ctx.need("storeTemplate")}/media`, upload("file", png(), { media_type: "image", title: "Screen" }), (b) => b.store_template.images[0].id))();
      case "payout":
        // The owner's payout of the sale's earnings (all 21 €: a payout takes whole earnings that fit), requested once they are past the refund hold.
        return (async () => {
          await ctx.need("storeSale");
          await ctx.pool.query(sql.type(z.object({}))`update seller_earnings set created_at = now() - make_interval(days => ${PAYOUT_HOLD_DAYS + 1}) where seller_id = ${owner.id}`);
          return ctx.call(kind, "POST", "/api/seller/payouts", { amount: 21 }, (b) => b.payout.id);
        })();
      case "payoutProcessed":
        // The job's first step: the earnings attached, the payout processing.
        return (async () => {
          const payout = await ctx.need("payout");
          const row = await ctx.pool.transaction((tx) => attachEarnings(tx, payout, PAYOUT_HOLD_DAYS));
          return row?.status === "processing" ? payout : undefined;
        })();
      case "payoutSent":
        // The job's last steps: the transfer file stored, the payout sent.
        return (async () => {
          const payout = await ctx.need("payoutProcessed");
          const key = `payouts/${payout}/pain.001.xml`;
          const xml = painXml({ reference: `SF-PAYOUT-${payout}`, createdAt: new Date(), debtorName: "SchemaForge", debtorIban: VALID_IBAN, creditorName: "Fuzz GmbH", creditorIban: VALID_IBAN, amountCents: 2100, remittance: `Template store payout ${payout}` });
          await new PostgresStorage(ctx.pool).put(key, Buffer.from(xml), { contentType: "application/xml" });
          await ctx.pool.transaction(async (tx) => {
            await lockPayout(tx, payout);
            await markSent(tx, payout, key);
          });
          return payout;
        })();
      default:
        return null;
    }
  }

  /** A top-level template of `userId` whose text no other world's has. */
  private source(userId: number): Promise<number> {
    const text = () => randomBytes(48).toString("base64url");
    return buildTemplate(this.ctx.pool, { ownerId: userId }, userId, { content: `Package ${text()}`, files: [{ file_name: `${text()}.txt`, content: text() }] });
  }

  /** Completes `person`'s seller profile through PUT /profile/seller. */
  private async becomeSeller(kind: string, person: Person): Promise<boolean> {
    const body = { is_seller: true, payout_method: "bank_transfer", bank_iban: VALID_IBAN, bank_account_holder: "Fuzz GmbH" };
    return (await this.ctx.call(kind, "PUT", "/api/profile/seller", body, () => person.id, { token: person.token })) !== undefined;
  }

  /** A draft of `person`'s packaging the templates `sources` make (the owner's draft: the seller profile first). */
  private async draft(kind: string, person: Person, sources: (() => Promise<number>)[]): Promise<number | undefined> {
    if (person.id === this.ctx.owner.id) await this.ctx.need("seller");
    const templateIds = [];
    for (const source of sources) templateIds.push(await source());
    const body = { name: "Fuzz kit", description: "A kit.", category: "Utilities", language: "TypeScript", price_type: "credits", price_credits: PRICE_CREDITS, template_ids: templateIds };
    return this.ctx.call(kind, "POST", "/api/store/templates", body, (b) => b.store_template.id, { token: person.token });
  }

  /** A published store template of `person`'s. */
  private async published(kind: string, person: Person, source: () => Promise<number>): Promise<number | undefined> {
    const id = await this.draft(kind, person, [source]);
    if (id === undefined) return undefined;
    return this.ctx.call(kind, "POST", `/api/store/templates/${id}/publish`, {}, () => id, { token: person.token });
  }

  /** Another user with a complete seller profile. */
  private otherSeller(): Promise<Person> {
    this.seller ??= (async () => {
      const user = await buildUser(this.ctx.pool);
      const person = { id: user.id, token: await tokenFor(this.ctx.pool, user) };
      await this.becomeSeller("otherSeller", person);
      return person;
    })();
    return this.seller;
  }

  /**
   * A published template of the other seller's that the owner has not bought (one per call:
   * `storeForSale` and `storeBought` each get their own).
   */
  private async otherSellers(kind: string): Promise<number | undefined> {
    const seller = await this.otherSeller();
    return this.published(kind, seller, () => this.source(seller.id));
  }

  /** Enough credits for a purchase of the world's price. */
  private async afford(userId: number): Promise<void> {
    await grantCredits(this.ctx.pool, { userId, amount: PRICE_CREDITS, reason: "fuzz_world", referenceType: null, referenceId: null, idempotencyKey: `fuzz_world:${randomBytes(8).toString("hex")}` });
  }
}
