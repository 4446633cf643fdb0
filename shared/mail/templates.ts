/**
 * E-mail texts in both locales of the service (en, de). Each message is a subject and a
 * few paragraphs with `{name}` placeholders; links are given separately and rendered as a
 * button in HTML and as a bare line in text.
 */
export const mailKinds = ["verify_email", "reset_password", "password_changed", "team_invitation", "confirm_new_email", "email_change_requested", "team_invitation_existing", "subscription_expired", "subscription_renewal_failed", "support_ticket_reply", "deployment_succeeded", "deployment_failed", "kanban_card_assigned", "message_posted", "two_factor_disabled", "two_factor_recovery_codes", "payment_refunded", "purchase_refunded"] as const;
export type MailKind = (typeof mailKinds)[number];
export type Locale = "en" | "de";

interface MailText {
  subject: string;
  paragraphs: string[];
  action?: string;
}

const texts: Record<Locale, Record<MailKind, MailText>> = {
  en: {
    verify_email: {
      subject: "Confirm your e-mail address",
      paragraphs: ["Hello {name},", "please confirm your e-mail address to finish setting up your account.", "The link is valid for 24 hours."],
      action: "Confirm e-mail address",
    },
    reset_password: {
      subject: "Reset your password",
      paragraphs: ["Hello {name},", "someone asked to reset the password of your account. If that was you, choose a new password:", "The link is valid for 60 minutes and can be used once. If you did not ask for this, ignore this message."],
      action: "Reset password",
    },
    password_changed: {
      subject: "Your password was changed",
      paragraphs: ["Hello {name},", "the password of your account was just changed and every other session was signed out.", "If you did not do this, reset your password at once and contact support."],
    },
    team_invitation: {
      subject: "{inviter} invited you to the team {team}",
      paragraphs: ["Hello,", "{inviter} invited you to join the team {team}. Create your account to accept:"],
      action: "Accept the invitation",
    },
    confirm_new_email: {
      subject: "Confirm your new e-mail address",
      paragraphs: ["Hello {name},", "please confirm that this is the new e-mail address of your account. Until you do, your account keeps its old address.", "The link is valid for 24 hours and can be used once."],
      action: "Confirm new e-mail address",
    },
    email_change_requested: {
      subject: "Your e-mail address is being changed",
      paragraphs: ["Hello {name},", "someone asked to change the e-mail address of your account to {new_email}. If that was not you, cancel the change: your address is restored and every session is signed out.", "The link is valid for 7 days. Then change your password."],
      action: "Cancel the change",
    },
    team_invitation_existing: {
      subject: "{inviter} invited you to the team {team}",
      paragraphs: ["Hello,", "{inviter} invited you to join the team {team}. Sign in to accept or decline the invitation:"],
      action: "Open your invitations",
    },
    subscription_expired: {
      subject: "The subscription of {project} has ended",
      paragraphs: ["Hello {name},", "the {plan} subscription of your project {project} has ended, so the project is read-only now.", "Renew the subscription to make changes again."],
    },
    subscription_renewal_failed: {
      subject: "We could not renew the subscription of {project}",
      paragraphs: ["Hello {name},", "renewing the {plan} subscription of your project {project} needs {price} credits, and your balance holds {balance}.", "The project is read-only until you buy credits and renew it."],
    },
    support_ticket_reply: {
      subject: "New reply to your support ticket #{ticket}: {subject}",
      paragraphs: ["Hello {name},", "our support team replied to your ticket #{ticket} ({subject}):", "{reply}"],
      action: "Open the ticket",
    },
    deployment_succeeded: {
      subject: "Deployment #{deployment} to {environment} succeeded",
      paragraphs: ["Hello {name},", "your deployment #{deployment} to {environment} finished successfully."],
      action: "Open the deployment",
    },
    deployment_failed: {
      subject: "Deployment #{deployment} to {environment} failed",
      paragraphs: ["Hello {name},", "your deployment #{deployment} to {environment} failed:", "{error}"],
      action: "Open the deployment",
    },
    kanban_card_assigned: {
      subject: "{assigner} assigned you to card #{card}: {title}",
      paragraphs: ["Hello {name},", "{assigner} assigned you to the card #{card} \"{title}\"."],
      action: "Open the card",
    },
    message_posted: {
      subject: "New message in {thread}",
      paragraphs: ["Hello {name},", "{author} wrote in \"{thread}\":", "{excerpt}"],
      action: "Open the conversation",
    },
    two_factor_disabled: {
      subject: "Two-factor authentication was turned off",
      paragraphs: ["Hello {name},", "two-factor authentication was just turned off for your account. If that was not you, turn it back on with the same authenticator app and recovery codes; every session is signed out as well.", "The link is valid for 7 days and can be used once. Then change your password."],
      action: "Turn two-factor authentication back on",
    },
    two_factor_recovery_codes: {
      subject: "New recovery codes were made for your account",
      paragraphs: ["Hello {name},", "new two-factor recovery codes were just made for your account, and the old ones stopped working. If that was not you, undo it: your previous recovery codes work again, the new ones stop, and every session is signed out.", "The link is valid for 7 days and can be used once. Then change your password."],
      action: "Undo and sign out everywhere",
    },
    payment_refunded: {
      subject: "We are refunding your payment of {amount}",
      paragraphs: ["Hello {name},", "your payment of {amount} for {item} went through, but we could not deliver it: {reason}.", "We are refunding the whole amount to the card or account you paid with; it may take a few days to show there."],
    },
    purchase_refunded: {
      subject: "We refunded your purchase of {item}",
      paragraphs: ["Hello {name},", "we refunded your purchase of {item}: {amount} go back to the card or account you paid with; it may take a few days to show there.", "The template is no longer yours to download or install. Credit note {credit_note} is with your invoices."],
    },
  },
  de: {
    verify_email: {
      subject: "Bestätige deine E-Mail-Adresse",
      paragraphs: ["Hallo {name},", "bitte bestätige deine E-Mail-Adresse, um die Einrichtung deines Kontos abzuschließen.", "Der Link ist 24 Stunden gültig."],
      action: "E-Mail-Adresse bestätigen",
    },
    reset_password: {
      subject: "Passwort zurücksetzen",
      paragraphs: ["Hallo {name},", "jemand möchte das Passwort deines Kontos zurücksetzen. Wenn du das warst, wähle ein neues Passwort:", "Der Link ist 60 Minuten gültig und nur einmal verwendbar. Wenn du das nicht angefordert hast, ignoriere diese Nachricht."],
      action: "Passwort zurücksetzen",
    },
    password_changed: {
      subject: "Dein Passwort wurde geändert",
      paragraphs: ["Hallo {name},", "das Passwort deines Kontos wurde soeben geändert und alle anderen Sitzungen wurden abgemeldet.", "Wenn du das nicht warst, setze dein Passwort sofort zurück und wende dich an den Support."],
    },
    team_invitation: {
      subject: "{inviter} hat dich in das Team {team} eingeladen",
      paragraphs: ["Hallo,", "{inviter} hat dich eingeladen, dem Team {team} beizutreten. Lege dein Konto an, um die Einladung anzunehmen:"],
      action: "Einladung annehmen",
    },
    confirm_new_email: {
      subject: "Bestätige deine neue E-Mail-Adresse",
      paragraphs: ["Hallo {name},", "bitte bestätige, dass dies die neue E-Mail-Adresse deines Kontos ist. Bis dahin behält dein Konto die alte Adresse.", "Der Link ist 24 Stunden gültig und nur einmal verwendbar."],
      action: "Neue E-Mail-Adresse bestätigen",
    },
    email_change_requested: {
      subject: "Deine E-Mail-Adresse wird geändert",
      paragraphs: ["Hallo {name},", "jemand möchte die E-Mail-Adresse deines Kontos in {new_email} ändern. Wenn du das nicht warst, brich die Änderung ab: deine Adresse wird wiederhergestellt und alle Sitzungen werden abgemeldet.", "Der Link ist 7 Tage gültig. Ändere danach dein Passwort."],
      action: "Änderung abbrechen",
    },
    team_invitation_existing: {
      subject: "{inviter} hat dich in das Team {team} eingeladen",
      paragraphs: ["Hallo,", "{inviter} hat dich eingeladen, dem Team {team} beizutreten. Melde dich an, um die Einladung anzunehmen oder abzulehnen:"],
      action: "Einladungen öffnen",
    },
    subscription_expired: {
      subject: "Das Abonnement von {project} ist abgelaufen",
      paragraphs: ["Hallo {name},", "das {plan}-Abonnement deines Projekts {project} ist abgelaufen; das Projekt ist jetzt schreibgeschützt.", "Verlängere das Abonnement, um wieder Änderungen vorzunehmen."],
    },
    subscription_renewal_failed: {
      subject: "Das Abonnement von {project} konnte nicht verlängert werden",
      paragraphs: ["Hallo {name},", "die Verlängerung des {plan}-Abonnements deines Projekts {project} kostet {price} Credits, dein Guthaben beträgt {balance}.", "Das Projekt ist schreibgeschützt, bis du Credits kaufst und es verlängerst."],
    },
    support_ticket_reply: {
      subject: "Neue Antwort auf dein Support-Ticket #{ticket}: {subject}",
      paragraphs: ["Hallo {name},", "unser Support-Team hat auf dein Ticket #{ticket} ({subject}) geantwortet:", "{reply}"],
      action: "Ticket öffnen",
    },
    deployment_succeeded: {
      subject: "Deployment #{deployment} nach {environment} erfolgreich",
      paragraphs: ["Hallo {name},", "dein Deployment #{deployment} nach {environment} ist erfolgreich abgeschlossen."],
      action: "Deployment öffnen",
    },
    deployment_failed: {
      subject: "Deployment #{deployment} nach {environment} fehlgeschlagen",
      paragraphs: ["Hallo {name},", "dein Deployment #{deployment} nach {environment} ist fehlgeschlagen:", "{error}"],
      action: "Deployment öffnen",
    },
    kanban_card_assigned: {
      subject: "{assigner} hat dich der Karte #{card} zugewiesen: {title}",
      paragraphs: ["Hallo {name},", "{assigner} hat dich der Karte #{card} „{title}“ zugewiesen."],
      action: "Karte öffnen",
    },
    message_posted: {
      subject: "Neue Nachricht in {thread}",
      paragraphs: ["Hallo {name},", "{author} hat in „{thread}“ geschrieben:", "{excerpt}"],
      action: "Unterhaltung öffnen",
    },
    two_factor_disabled: {
      subject: "Die Zwei-Faktor-Authentifizierung wurde ausgeschaltet",
      paragraphs: ["Hallo {name},", "die Zwei-Faktor-Authentifizierung deines Kontos wurde gerade ausgeschaltet. Wenn du das nicht warst, schalte sie mit derselben Authenticator-App und denselben Wiederherstellungscodes wieder ein; dabei werden auch alle Sitzungen abgemeldet.", "Der Link ist 7 Tage gültig und nur einmal verwendbar. Ändere danach dein Passwort."],
      action: "Zwei-Faktor-Authentifizierung wieder einschalten",
    },
    two_factor_recovery_codes: {
      subject: "Für dein Konto wurden neue Wiederherstellungscodes erstellt",
      paragraphs: ["Hallo {name},", "für dein Konto wurden gerade neue Wiederherstellungscodes für die Zwei-Faktor-Authentifizierung erstellt; die alten gelten nicht mehr. Wenn du das nicht warst, mach es rückgängig: deine bisherigen Codes gelten wieder, die neuen nicht mehr, und alle Sitzungen werden abgemeldet.", "Der Link ist 7 Tage gültig und nur einmal verwendbar. Ändere danach dein Passwort."],
      action: "Rückgängig machen und überall abmelden",
    },
    payment_refunded: {
      subject: "Wir erstatten deine Zahlung über {amount}",
      paragraphs: ["Hallo {name},", "deine Zahlung über {amount} für {item} ist eingegangen, wir konnten das Gekaufte aber nicht liefern: {reason}.", "Wir erstatten den ganzen Betrag auf die Karte oder das Konto, mit dem du bezahlt hast; bis er dort erscheint, kann es einige Tage dauern."],
    },
    purchase_refunded: {
      subject: "Wir haben deinen Kauf von {item} erstattet",
      paragraphs: ["Hallo {name},", "wir haben deinen Kauf von {item} erstattet: {amount} gehen zurück auf die Karte oder das Konto, mit dem du bezahlt hast; bis der Betrag dort erscheint, kann es einige Tage dauern.", "Die Vorlage kannst du nicht mehr herunterladen oder installieren. Die Gutschrift {credit_note} findest du bei deinen Rechnungen."],
    },
  },
};

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const fill = (template: string, params: Record<string, string>) => template.replace(/\{(\w+)\}/g, (_m, key: string) => params[key] ?? "");

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

/** Renders a message; `link` is the action's target, if the message has one. */
export function renderMail(kind: MailKind, locale: string, params: Record<string, string>, link?: string): RenderedMail {
  const t = texts[locale === "de" ? "de" : "en"][kind];
  const subject = fill(t.subject, params);
  const paragraphs = t.paragraphs.map((p) => fill(p, params));
  const text = [...paragraphs.slice(0, 2), ...(link ? [link] : []), ...paragraphs.slice(2)].join("\n\n");
  const safeParams = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, escapeHtml(v)]));
  const htmlParagraphs = t.paragraphs.map((p) => `<p>${fill(escapeHtml(p), safeParams)}</p>`);
  const button = link && t.action ? `<p><a href="${escapeHtml(link)}" style="display:inline-block;padding:10px 18px;background:#2563eb;color:#fff;border-radius:6px;text-decoration:none">${escapeHtml(t.action)}</a></p>` : "";
  const html = `<!doctype html><html><body style="font-family:sans-serif;line-height:1.5">${[...htmlParagraphs.slice(0, 2), button, ...htmlParagraphs.slice(2)].join("")}</body></html>`;
  return { subject, text, html };
}

/** Share (0–1) of the e-mail kinds that have a text in `locale` (the languages list reports it). */
export function mailCompleteness(locale: Locale): number {
  const own = texts[locale] as Partial<Record<MailKind, MailText>>;
  return mailKinds.filter((kind) => own[kind]?.subject).length / mailKinds.length;
}
