/**
 * What a user can be notified of, and through which channels; the settings choose per pair.
 */
export const NOTIFICATION_KINDS = ["deployment_completed", "kanban_card_assigned", "message_posted", "support_ticket_reply"] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export const NOTIFICATION_CHANNELS = ["email", "push"] as const;
export type NotificationChannel = (typeof NOTIFICATION_CHANNELS)[number];

/** Every kind with both channels: on or off. */
export type NotificationChoices = Record<NotificationKind, Record<NotificationChannel, boolean>>;
