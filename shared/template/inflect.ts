/**
 * English plural and singular of the last word of a name, good enough for table and class
 * names (categories/category, people/person, statuses/status, addresses/address, children/child).
 * The case of the word is kept (`UserCategory` → `UserCategories`, `USER` → `USERS`), and a word
 * already in the wanted form is left alone (`plural("users")` is `users`).
 */

const irregular: [string, string][] = [
  ["person", "people"],
  ["child", "children"],
  ["man", "men"],
  ["woman", "women"],
  ["mouse", "mice"],
  ["goose", "geese"],
  ["tooth", "teeth"],
  ["foot", "feet"],
  ["ox", "oxen"],
  ["datum", "data"],
  ["criterion", "criteria"],
  ["leaf", "leaves"],
  ["loaf", "loaves"],
  ["shelf", "shelves"],
  ["half", "halves"],
  ["wolf", "wolves"],
  ["calf", "calves"],
  ["knife", "knives"],
  ["life", "lives"],
  ["wife", "wives"],
  ["thief", "thieves"],
  ["elf", "elves"],
  ["axis", "axes"],
  ["die", "dice"],
  ["quiz", "quizzes"],
  ["movie", "movies"],
  ["cookie", "cookies"],
  ["zombie", "zombies"],
  ["calorie", "calories"],
  ["rookie", "rookies"],
  ["pie", "pies"],
  ["tie", "ties"],
];
const toPlural = new Map(irregular);
const toSingular = new Map(irregular.map(([s, p]) => [p, s]));

const uncountable = new Set(
  (
    "data metadata media information equipment feedback news series species sheep fish deer rice money software " +
    "hardware firmware staff audio analytics aircraft moose police traffic weather luggage furniture advice homework " +
    "knowledge research cattle chassis offspring bison salmon trout swine headquarters"
  ).split(" "),
);

/** Rules tried in order: [pattern, replacement]. */
const pluralRules: [RegExp, string][] = [
  [/(matr|vert)(ix|ex)$/, "$1ices"],
  [/(buffal|tomat|potat|her|ech|vet|volcan)o$/, "$1oes"],
  [/(analy|diagno|parenthe|progno|synop|the|cri)sis$/, "$1ses"],
  [/([^aeiouy]|qu)y$/, "$1ies"],
  [/(x|ch|ss|sh|zz|us|s|z)$/, "$1es"],
  [/$/, "s"],
];

const singularRules: [RegExp, string][] = [
  [/(matr)ices$/, "$1ix"],
  [/(vert|ind)ices$/, "$1ex"],
  [/(buffal|tomat|potat|her|ech|vet|volcan)oes$/, "$1o"],
  [/(analy|diagno|parenthe|progno|synop|the|cri)ses$/, "$1sis"],
  [/([^aeiouy]|qu)ies$/, "$1y"],
  [/(x|ch|ss|sh|zz|us|alias|canvas|atlas|bias|gas)es$/, "$1"],
  [/(ss|us|is|alias|canvas|atlas|bias|gas)$/, "$1"],
  [/s$/, ""],
];

const apply = (word: string, rules: [RegExp, string][]) => {
  for (const [pattern, replacement] of rules) if (pattern.test(word)) return word.replace(pattern, replacement);
  return word;
};

function singularWord(word: string): string {
  if (uncountable.has(word)) return word;
  return toSingular.get(word) ?? (toPlural.has(word) ? word : apply(word, singularRules));
}

function pluralWord(word: string): string {
  if (uncountable.has(word)) return word;
  const known = toPlural.get(word);
  if (known) return known;
  if (toSingular.has(word)) return word;
  const single = singularWord(word);
  // Already plural: its singular pluralizes back to it.
  if (single !== word && apply(single, pluralRules) === word) return word;
  return apply(word, pluralRules);
}

const isLowerAt = (s: string, i: number) => {
  const c = s.charCodeAt(i);
  return c >= 97 && c <= 122;
};
const isUpperAt = (s: string, i: number) => {
  const c = s.charCodeAt(i);
  return c >= 65 && c <= 90;
};

/**
 * Where the last word starts, or -1 when the name does not end in an ASCII letter: the
 * lower-case run at the end with the capital before it (`Category` of `UserCategory`), or the
 * capitals at the end (`CATEGORY` of `USER_CATEGORY`). A scan from the end: the pattern
 * `(?:[A-Z]?[a-z]+|[A-Z]+)$` it replaces backtracked from every position of a long run of
 * letters not at the end, time quadratic in the length (a minute for 120,000 letters).
 */
function lastWordStart(name: string): number {
  let i = name.length;
  if (i > 0 && isLowerAt(name, i - 1)) {
    while (i > 0 && isLowerAt(name, i - 1)) i--;
    return i > 0 && isUpperAt(name, i - 1) ? i - 1 : i;
  }
  while (i > 0 && isUpperAt(name, i - 1)) i--;
  return i === name.length ? -1 : i;
}

function inflectLast(name: string, change: (word: string) => string): string {
  const start = lastWordStart(name);
  if (start === -1) return name;
  const word = name.slice(start);
  const lower = word.toLowerCase();
  let out = change(lower);
  // A lone "s" would lose its only letter to the rule that strips a plural s: no word is left to inflect.
  if (out === lower || out === "") return name;
  if (word.length > 1 && word === word.toUpperCase()) out = out.toUpperCase();
  else if (word[0] !== lower[0]) out = out[0]!.toUpperCase() + out.slice(1);
  return name.slice(0, start) + out;
}

/** Plural of the last word of `name`. */
export const pluralize = (name: string) => inflectLast(name, pluralWord);

/** Singular of the last word of `name`. */
export const singularize = (name: string) => inflectLast(name, singularWord);
