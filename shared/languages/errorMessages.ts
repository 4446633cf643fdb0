/**
 * Error messages in the caller's language. The `code` of an error body is what clients
 * switch on and never changes; the human `message` is given in the caller's locale when a
 * text exists for the code there, and stays as thrown otherwise. Messages that carry a
 * detail only the thrower knows (a template's error position, a maintenance notice an
 * administrator wrote, a provider's refusal) are not replaced. The field messages of a 422
 * (`errors`) stay English for now: they are built by the validators of each route.
 */
import { acceptedLanguages, LOCALES, type LocaleCode } from "./detect.ts";

const supported = new Set<string>(LOCALES.map((l) => l.code));

/** German texts by error code. */
const de: Record<string, string> = {
  unauthenticated: "Nicht angemeldet.",
  forbidden: "Diese Aktion ist nicht erlaubt.",
  not_found: "Die angeforderte Ressource wurde nicht gefunden.",
  validation_failed: "Die übermittelten Daten sind ungültig.",
  rate_limited: "Zu viele Anfragen. Bitte versuchen Sie es später erneut.",
  too_many_attempts: "Zu viele fehlgeschlagene Versuche. Bitte versuchen Sie es später erneut.",
  insufficient_credits: "Ihr Guthaben an Credits reicht dafür nicht aus.",
  subscription_expired: "Das Abonnement des Projekts ist abgelaufen; verlängern Sie es, um Änderungen vorzunehmen.",
  project_locked: "Das Projekt ist gesperrt; entsperren Sie es, um Änderungen vorzunehmen.",
  project_archived: "Das Projekt ist archiviert; holen Sie es aus dem Archiv, um Änderungen vorzunehmen.",
  wip_limit_reached: "Die Spalte hat ihr WIP-Limit erreicht.",
  column_full: "Die Spalte enthält bereits so viele Karten, wie eine Spalte aufnehmen kann.",
  conflict: "Die Anfrage widerspricht dem aktuellen Zustand.",
  already_purchased: "Sie haben diese Vorlage bereits gekauft.",
  payment_pending: "Eine Zahlung für diese Vorlage ist noch offen.",
  payment_provider_unavailable: "Diese Zahlungsart ist auf diesem Server nicht verfügbar.",
  patron_required: "Dafür ist eine Patron-Mitgliedschaft nötig.",
  form_designer_locked: "Der Formular-Designer ist für Ihr Konto nicht freigeschaltet.",
  email_unverified: "Bitte bestätigen Sie zuerst Ihre E-Mail-Adresse.",
  account_disabled: "Dieses Konto ist deaktiviert.",
  registration_closed: "Die Registrierung ist derzeit geschlossen.",
  insufficient_scope: "Dem Token fehlt die dafür nötige Berechtigung.",
  malformed_body: "Der Inhalt der Anfrage ist kein gültiges JSON, Formular oder Multipart.",
  payload_too_large: "Der Inhalt der Anfrage ist zu groß.",
  unsupported_media_type: "Der Inhaltstyp der Anfrage wird hier nicht unterstützt.",
  method_not_allowed: "Diese Methode ist für diese Route nicht erlaubt.",
  bad_request: "Die Anfrage konnte nicht verstanden werden.",
  push_unavailable: "Push-Benachrichtigungen sind auf diesem Server nicht eingerichtet.",
  translation_unavailable: "Die automatische Übersetzung ist auf diesem Server nicht eingerichtet.",
  database_unavailable: "Die Datenbank ist gerade nicht erreichbar. Bitte versuchen Sie es in Kürze erneut.",
  server_error: "Serverfehler",
};

const texts: Partial<Record<LocaleCode, Record<string, string>>> = { de };

/** The locale to answer in: the signed-in user's language when the service speaks it, else the first spoken one of `Accept-Language`, else English. */
export function errorLocale(userLanguage: string | null | undefined, acceptLanguage: string | undefined): LocaleCode {
  if (userLanguage && supported.has(userLanguage)) return userLanguage as LocaleCode;
  for (const { tag } of acceptedLanguages(acceptLanguage)) {
    const primary = tag.split("-")[0]!;
    if (supported.has(primary)) return primary as LocaleCode;
  }
  return "en";
}

/** `message` of an error with `code`, in `locale` when there is a text for it. */
export function localizedErrorMessage(code: string, message: string, locale: LocaleCode): string {
  return texts[locale]?.[code] ?? message;
}
