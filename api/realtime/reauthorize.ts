/**
 * Re-authorization of open private subscriptions (security review finding 14): a socket
 * keeps a channel only while the credential that authorized it still holds and the channel's
 * authorizer still says yes. Checked
 * - at once when access may have changed: database triggers (migration 0016) NOTIFY
 *   `realtime_access` with `user:<id>` (membership, role, account disabled, tokens revoked) or
 *   `*` (a project's owner, sharing or deletion changed, which may touch anyone); a revoked
 *   OAuth client (`oauth_clients`) and a LISTEN reconnect (notifications may be lost) count
 *   as `*`;
 * - and at the latest every REALTIME_REAUTH_S seconds, for whatever no trigger sees.
 *
 * From the moment a change is announced until its check is done, the events of the affected
 * subscriptions are held back (NOTIFYs arrive in commit order on one connection, so nothing
 * published after the change slips through); they are delivered if access stands and
 * dropped if it ended. A subscription that lost access gets `pusher:subscription_error`
 * (status 403) on its channel and nothing more.
 */
import type { AppDeps } from "../context.ts";
import { CLIENT_CHANGES_CHANNEL } from "../oauth/accessTokens.ts";
import type { UserRow } from "../../shared/db/users.ts";
import { findChannelAuthorizer } from "./channelAuth.ts";
import { actingUser, type ChannelGrant } from "./grants.ts";

/** The NOTIFY channel of access changes (migration 0016). */
export const ACCESS_CHANGES_CHANNEL = "realtime_access";

/** Subscriptions checked concurrently (each check is one or two short queries). */
const CHECKS_AT_ONCE = 8;

/** Most events held for one subscription while its access is checked; past it the socket must reconnect. */
export const MAX_HELD_FRAMES = 1000;

/** One private subscription of one socket, as the socket server keeps it. */
export interface Subscription {
  channel: string;
  grant: ChannelGrant;
  /** Frames held back while an announced change is checked; null when delivering. */
  held: string[] | null;
}

/** What the re-authorizer needs of the socket server. */
export interface SubscriptionSet {
  /** Every private subscription open on this process. */
  subscriptions(): Iterable<Subscription>;
  /** Whether the subscription is still open (not unsubscribed or closed meanwhile). */
  isOpen(subscription: Subscription): boolean;
  /** Sends the held frames and delivers again. */
  release(subscription: Subscription): void;
  /** Ends the subscription: subscription_error to the socket, held frames dropped. */
  revoke(subscription: Subscription): void;
}

/** What one pass of checks looks up once: acting users by grant, decisions by channel and grant. */
interface CheckMemo {
  users: Map<string, Promise<UserRow | null>>;
  decisions: Map<string, Promise<boolean>>;
}

type Scope = { all: true } | { all: false; users: Set<number> };

export class SubscriptionReauthorizer {
  readonly #deps: AppDeps;
  readonly #set: SubscriptionSet;
  readonly #pending = new Set<Subscription>();
  readonly #stops: (() => void)[] = [];
  #running: Promise<void> | null = null;

  constructor(deps: AppDeps, set: SubscriptionSet) {
    this.#deps = deps;
    this.#set = set;
  }

  /** Listens for access changes and starts the periodic re-check. */
  start(): void {
    const { hub, config } = this.#deps;
    this.#stops.push(hub.listen(ACCESS_CHANGES_CHANNEL, (payload) => this.announce(parseScope(payload))));
    this.#stops.push(hub.listen(CLIENT_CHANGES_CHANNEL, () => this.announce({ all: true })));
    this.#stops.push(hub.onReconnect(() => this.announce({ all: true })));
    const timer = setInterval(() => this.recheck({ all: true }, false), config.realtime.reauthS * 1000);
    timer.unref();
    this.#stops.push(() => clearInterval(timer));
  }

  stop(): void {
    for (const stop of this.#stops.splice(0)) stop();
  }

  /** An access change: hold the affected subscriptions' events and check them. */
  announce(scope: Scope): void {
    this.recheck(scope, true);
  }

  /** Queues the subscriptions in `scope` for a check (holding their events when `hold`). */
  recheck(scope: Scope, hold: boolean): void {
    for (const subscription of this.#set.subscriptions()) {
      if (!scope.all && !scope.users.has(subscription.grant.user_id)) continue;
      if (hold && subscription.held === null) subscription.held = [];
      this.#pending.add(subscription);
    }
    this.#run();
  }

  /**
   * A subscription just made, its events already held (the socket server holds its
   * `subscription_succeeded` first): its grant's signature binds no moment, so the grant may
   * predate a change that ended access (an authorization kept, or replayed on the same socket
   * after the subscription was ended). Checked like an announced change.
   */
  admit(subscription: Subscription): void {
    this.#pending.add(subscription);
    this.#run();
  }

  #run(): void {
    if (this.#running === null) this.#running = this.#drain().finally(() => (this.#running = null));
  }

  async #drain(): Promise<void> {
    while (this.#pending.size > 0) {
      const batch = [...this.#pending];
      this.#pending.clear();
      // One credential check per grant and one authorizer call per (grant, channel) in a pass:
      // the sockets of one user (tabs, devices) on one channel share them.
      const memo: CheckMemo = { users: new Map(), decisions: new Map() };
      // A few checks at once: held events wait for their own check, not for the whole batch.
      for (let i = 0; i < batch.length; i += CHECKS_AT_ONCE) {
        await Promise.all(batch.slice(i, i + CHECKS_AT_ONCE).map((subscription) => this.#check(subscription, memo)));
      }
    }
  }

  async #check(subscription: Subscription, memo: CheckMemo): Promise<void> {
    if (!this.#set.isOpen(subscription)) return;
    let allowed: boolean;
    try {
      allowed = await this.#allowed(subscription, memo);
    } catch (error) {
      // The database is away: keep the subscription; the next pass (or a reconnect) checks again.
      this.#deps.log.warn({ err: error, channel: subscription.channel }, "could not re-authorize a realtime subscription");
      allowed = true;
    }
    if (!this.#set.isOpen(subscription)) return;
    if (!allowed) this.#set.revoke(subscription);
    // A change announced during this check is checked again before the events go out.
    else if (!this.#pending.has(subscription)) this.#set.release(subscription);
  }

  #allowed(subscription: Subscription, memo: CheckMemo): Promise<boolean> {
    const key = JSON.stringify(subscription.grant);
    const decisionKey = `${subscription.channel} ${key}`;
    let decision = memo.decisions.get(decisionKey);
    if (!decision) {
      let user = memo.users.get(key);
      if (!user) {
        user = actingUser(this.#deps, subscription.grant);
        memo.users.set(key, user);
      }
      decision = this.#decide(subscription.channel, user);
      memo.decisions.set(decisionKey, decision);
    }
    return decision;
  }

  async #decide(channel: string, user: Promise<UserRow | null>): Promise<boolean> {
    const acting = await user;
    const found = findChannelAuthorizer(channel);
    return acting !== null && found !== undefined && (await found.authorizer(this.#deps, acting, found.id));
  }
}

/** `user:<id>` → that user's subscriptions; anything else (`*`) → all. */
function parseScope(payload: string): Scope {
  const match = /^user:(\d{1,18})$/.exec(payload);
  return match ? { all: false, users: new Set([Number(match[1])]) } : { all: true };
}
