/**
 * The quick reading of form elements (shared/forms/elementInputQuick.ts) against zod's
 * `elementInput`, which stays the source of truth: over generated elements, near-valid ones
 * with one or two fields changed to a boundary or a wrong value, whatever the quick reading
 * accepts zod accepts too and reads to the same object, and the usual elements are read
 * quickly (else the route would pay zod anyway).
 */
import t from "tap";
import { quickLayoutBody, layoutBody } from "../../../api/routes/forms/formDesigner.schema.ts";
import { elementInput, elementTypes } from "../../../shared/forms/elementInput.ts";
import { quickElementInput, tookEveryField } from "../../../shared/forms/elementInputQuick.ts";
import { seededRandom as random } from "../../support/random.ts";

const ABSENT = Symbol("absent");
const ints = [-1, 0, 1, 2, 99, 100, 101, 999, 1000, 1001, 9999, 10_000, 10_001, 1_000_000, 1_000_001, 2.5, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2];
const texts = ["", " ", "a", "  Save  ", "x".repeat(100), " " + "y".repeat(100), "z".repeat(101), "w".repeat(255), "v".repeat(256), " " + "u".repeat(255) + " "];
const colors = ["#fff", "#FFF", "#1a2b3c", "#1a2b3c4d", "#12", "#1234", "red", "#ggg", " #fff"];
/** Values any field may get: every kind of JSON value, boundaries, the values of other fields. */
const anything: unknown[] = [ABSENT, null, true, false, "1", [], {}, ...ints, ...texts, ...colors, ...elementTypes, "text", "number", "date", "dropdown", "vertical", "horizontal", "users", "id", "email"];

/** A valid element of each kind (the shapes the designer sends). */
const valid: Record<string, unknown>[] = [
  { element_type: "container_simple", container_orientation: "vertical", container_gap: 8 },
  { element_type: "container_simple", container_orientation: "horizontal", container_gap: 0, container_columns: 3 },
  { element_type: "container_tab", max_fields: 10, default_control_height: 24 },
  { element_type: "container_grid", container_columns: 2, container_gap: 4, max_fields: 8 },
  { element_type: "button_save", button_label: "Save", button_action: "save" },
  { element_type: "button_nav_last", button_label: " >| ", button_action: "last", button_icon: "last", button_background_color: "#000", button_text_color: null },
  { element_type: "separator_horizontal" },
  { element_type: "separator_vertical", id: 12, x_position: 5, tab_order: 2 },
  { element_type: "field_textinput", field_name: "users.email", control_type: "text" },
  { element_type: "field_number", field_name: " title ", control_type: "number", link_table: null },
  { element_type: "field_dropdown", field_name: "posts.user_id", control_type: "dropdown", link_table: "users", link_field: "id", link_display_field: "email" },
  { element_type: "field_textinput", field_name: "posts.user_id", control_type: "dropdown", link_table: "users", link_field: "id", link_display_field: "email" },
  {
    element_type: "separator_horizontal", id: 3, x_position: 3, y_position: 4, width: 50, height: 20, sort_order: 7, is_visible: false, tab_order: 9,
    background_color: "#123456", border_width: 2, border_color: "#654321", anchor_right: 5, anchor_bottom: 6, anchor_width: 7, anchor_height: 8, unknown: "dropped",
  },
];
const fields = [...new Set([...valid.flatMap((e) => Object.keys(e)), "button_icon", "link_field", "link_display_field", "container_columns"])];

t.test("whatever the quick reading accepts, zod accepts and reads alike", async (t) => {
  const next = random(18);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  let quick = 0;
  let mismatches = 0;
  for (let n = 0; n < 30_000; n += 1) {
    const element: Record<string, unknown> = { ...pick(valid) };
    for (let changes = 1 + Math.floor(next() * 2); changes > 0; changes -= 1) {
      const value = pick(anything);
      const field = pick(fields);
      if (value === ABSENT) delete element[field];
      else element[field] = value;
    }
    const fast = quickElementInput(element);
    if (fast === undefined) continue;
    quick += 1;
    const zod = elementInput.safeParse(element);
    if (!zod.success || JSON.stringify(zod.data) !== JSON.stringify(fast)) {
      mismatches += 1;
      if (mismatches <= 5) t.fail(`${JSON.stringify(element)}: quick ${JSON.stringify(fast)}, zod ${zod.success ? JSON.stringify(zod.data) : zod.error.message}`);
    }
  }
  t.equal(mismatches, 0, "no element read differently");
  t.ok(quick > 3000, `a fair share was read quickly (${quick})`);
});

t.test("the usual elements are read quickly and exactly as zod reads them", async (t) => {
  for (const element of valid) {
    const fast = quickElementInput(element);
    t.ok(fast, `${String(element.element_type)} read quickly`);
    t.strictSame(fast, elementInput.parse(element), `${String(element.element_type)}: the same object`);
  }
  t.equal(quickElementInput([valid[0]]), undefined, "an array is left to zod");
  t.equal(quickElementInput({ ...valid[0], element_type: "container_round" }), undefined, "an unknown kind is left to zod");
});

t.test("layout bodies: the quick reading or zod's", async (t) => {
  const body = { version: 3, elements: valid, note: "dropped" };
  t.strictSame(quickLayoutBody(body), layoutBody.parse(body), "a well-formed body, read alike");
  for (const [what, bad] of [
    ["version 0", { version: 0, elements: [] }],
    ["version past int4", { version: 2_147_483_648, elements: [] }],
    ["a fractional version", { version: 1.5, elements: [] }],
    ["no element list", { version: 1 }],
    ["over 1,000 elements", { version: 1, elements: Array.from({ length: 1001 }, () => valid[6]) }],
    ["one element off", { version: 1, elements: [valid[0], { ...valid[4], button_label: " " }] }],
  ] as const) {
    t.equal(quickLayoutBody(bad), undefined, `${what}: left to zod`);
    t.notOk(layoutBody.safeParse(bad).success, `${what}: which refuses it`);
  }
});

t.test("a field zod reads for the kind and the quick reading did not take sends the element to zod", async (t) => {
  t.notOk(tookEveryField({ element_type: "button_save", button_label: "Save" }, { element_type: "button_save" }), "a button's label dropped");
  t.notOk(tookEveryField({ element_type: "field_dropdown", link_table: "users" }, { element_type: "field_dropdown" }), "a placement's link dropped");
  t.notOk(tookEveryField({ element_type: "container_round" }, {}), "an unknown kind");
  t.ok(tookEveryField({ element_type: "separator_horizontal", button_label: "x", created_at: "2026-01-01" }, { element_type: "separator_horizontal" }), "fields zod drops for the kind may stay behind");
  // What a client sends back after reading a window (its answer's extra fields included) is still read quickly.
  const echoed = { ...valid[4], id: 7, form_window_id: 3, created_at: "2026-11-29T10:00:00.000Z", updated_at: "2026-11-29T10:00:00.000Z" };
  t.strictSame(quickElementInput(echoed), elementInput.parse(echoed), "an element as a window's answer carries it");
  for (const element of valid) {
    const read = quickElementInput(element) as Record<string, unknown>;
    t.ok(tookEveryField(element, read), `${String(element.element_type)}: every field it sends is taken`);
  }
});
