/**
 * What a user can be notified of, and through which channels; the settings choose per pair.
 */
export const NOTIFICATION_KINDS = ["deployment_completed", "kanban_card_assigned", "message_posted", "support_ticket_reply", "billing"] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export const NOTIFICATION_CHANNELS = ["email", "push"] as const;
export type NotificationChannel = (typeof NOTIFICATION_CHANNELS)[number];

/** Every kind with both channels: on or off. */
export type NotificationChoices = Record<NotificationKind, Record<NotificationChannel, boolean>>;

/**
 * What a user who never chose gets: every direct event by e-mail and push (a deployment of
 * theirs finished, a card assigned to them, a reply in their ticket); a new message in a
 * thread, which in a busy project comes often, by push only; notices about their plans
 * (`billing`: a subscription ended or could not be renewed) by both. Receipts of money
 * (`payment_refunded`) are no notification: they go out whatever the choice, as security mails do.
 */
export const NOTIFICATION_DEFAULTS: NotificationChoices = {
  deployment_completed: { email: true, push: true },
  kanban_card_assigned: { email: true, push: true },
  message_posted: { email: false, push: true },
  support_ticket_reply: { email: true, push: true },
  billing: { email: true, push: true },
};

/** The default for `kind` on `channel` (on for anything unknown). */
export const defaultChoice = (kind: string, channel: string): boolean =>
  (NOTIFICATION_DEFAULTS as Record<string, Record<string, boolean> | undefined>)[kind]?.[channel] ?? true;
