/**
 * A generated store catalogue: names from two word lists (20 × 12 distinct pairs, then
 * edition words and numbers for larger catalogues), spread over categories, languages,
 * prices, sales and ratings. Deterministic, so tests and the benchmark know what is there.
 */
import { storeCategories } from "../../shared/store/catalog.ts";
import type { CatalogueEntry } from "./storeFactories.ts";

const subjects = ["CRM", "Invoice", "Blog", "Inventory", "Kanban", "Chat", "Booking", "Survey", "Payroll", "Ticket",
  "Recipe", "Fitness", "Weather", "Crypto", "Portfolio", "Forum", "Newsletter", "Analytics", "Shop", "Wiki"];
const kinds = ["Dashboard", "Manager", "Generator", "Starter", "API", "Admin Panel", "Mobile App", "Tracker", "Portal",
  "Toolkit", "Scaffold", "Backend"];
const editions = ["Pro", "Lite", "Plus", "Next", "Classic", "Studio", "Cloud", "Express", "Prime", "Core"];
export const catalogueLanguages = ["TypeScript", "PHP", "Python", "Go", "Java", "C#"];

/** The `index`-th entry (0-based) of the catalogue. */
export function catalogueEntry(index: number): CatalogueEntry {
  const pair = index % (subjects.length * kinds.length);
  const subject = subjects[pair % subjects.length]!;
  const kind = kinds[Math.floor(pair / subjects.length)]!;
  const round = Math.floor(index / (subjects.length * kinds.length));
  const name = round === 0 ? `${subject} ${kind}` : `${subject} ${kind} ${editions[round % editions.length]} ${round}`;
  const priceType = (["free", "credits", "euros"] as const)[index % 3]!;
  return {
    name,
    description: `A ${kind.toLowerCase()} for ${subject.toLowerCase()} projects, generated from your database schema.`,
    category: storeCategories[index % storeCategories.length]!,
    language: catalogueLanguages[index % catalogueLanguages.length]!,
    price_type: priceType,
    price: priceType === "free" ? 0 : priceType === "credits" ? 10 + (index % 50) * 10 : 5 + (index % 20),
    sales_count: (index * 37) % 1000,
    review_score: index % 4 === 0 ? null : 1 + ((index * 7) % 40) / 10,
    published_at: new Date(Date.UTC(2026, 0, 1) + index * 60_000),
  };
}

/** The first `count` entries. */
export const catalogue = (count: number) => Array.from({ length: count }, (_, i) => catalogueEntry(i));
