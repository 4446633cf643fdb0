/**
 * How `PUT /form-windows/{id}/layout` reads its body: the usual body is read without zod
 * (shared/forms/elementInputQuick.ts), the NUL and depth checks read the body's text, and
 * anything else goes to zod as before, so the 422s keep zod's fields and messages.
 */
import t from "tap";
import { layoutBody } from "../../../api/routes/forms/formDesigner.schema.ts";
import { fieldErrors } from "../../../shared/validation.ts";
import { startTestApp } from "../../support/app.ts";
import { request } from "../../support/http.ts";
import { designerWorld } from "../../support/formDesigner.ts";

t.test("layout bodies", async (t) => {
  const app = await startTestApp(t);
  const { designer: alice, api, projectId, schemaId } = await designerWorld(app);
  const set = (await api.post("/api/form-sets", { name: "Screens", project_id: projectId, schema_id: schemaId })).body.form_set;
  const window = (await api.post("/api/form-windows", { form_set_id: set.id, name: "Edit", window_type: "create_edit" })).body.form_window;
  const path = `/api/form-windows/${window.id}/layout`;
  const version = async () => (await api.get(`/api/form-windows/${window.id}`)).body.form_window.version as number;

  t.test("bodies zod refuses get zod's fields and messages, and nothing is written", async (t) => {
    const bodies: [string, unknown][] = [
      ["a label of spaces", { elements: [{ element_type: "button_save", button_label: "   ", button_action: "save" }] }],
      ["an unknown kind", { elements: [{ element_type: "button_round" }] }],
      ["a dropdown without its link", { elements: [{ element_type: "field_dropdown", field_name: "users.email", control_type: "dropdown", link_table: "users" }] }],
      ["a position past the limit and a colour", { elements: [{ element_type: "separator_horizontal", x_position: 10_001, border_color: "red" }] }],
      ["an element that is a list", { elements: [[]] }],
      ["no version", { version: undefined, elements: [] }],
    ];
    for (const [what, body] of bodies) {
      const sent = { version: await version(), ...(body as object) };
      const res = await api.put(path, sent);
      t.equal(res.status, 422, what);
      const parsed = layoutBody.safeParse(JSON.parse(JSON.stringify(sent)));
      t.notOk(parsed.success, `${what}: zod refuses it`);
      if (!parsed.success) t.same(res.body.errors, fieldErrors(parsed.error), `${what}: zod's fields and messages`);
    }
    t.same((await api.get(`/api/form-windows/${window.id}`)).body.form_window.elements, [], "nothing written");
  });

  t.test("a NUL in any string is refused on its field; an escaped backslash before u0000 is text", async (t) => {
    const v = await version();
    const nul = await request(app.url, "PUT", path, {
      token: alice.token,
      raw: true,
      body: `{"version": ${v}, "elements": [{"element_type": "separator_horizontal"}, {"element_type": "button_save", "button_label": "Sa\\u0000ve", "button_action": "save"}]}`,
      headers: { "content-type": "application/json" },
    });
    t.equal(nul.status, 422);
    t.same(nul.body.errors, { "elements.1.button_label": ["The value contains a NUL character; send text, not binary data."] });
    const literal = await api.put(path, { version: v, elements: [{ element_type: "button_save", button_label: "C:\\u0000", button_action: "save" }] });
    t.equal(literal.status, 200, literal.text);
    t.equal(literal.body.form_window.elements[0].button_label, "C:\\u0000", "stored as sent");
  });

  t.test("the usual body is read as zod reads it: trimmed, defaults filled, unknown keys dropped", async (t) => {
    const res = await api.put(path, {
      version: await version(),
      note: "dropped",
      elements: [
        { element_type: "button_save", button_label: "  Save  ", button_action: " save", button_icon: " ", colour: "dropped" },
        { element_type: "field_textinput", field_name: " users.email ", control_type: "text", tab_order: 1 },
      ],
    });
    t.equal(res.status, 200, res.text);
    const [field, button] = res.body.form_window.elements;
    t.match(field, { element_type: "field_textinput", field_name: "users.email", tab_order: 1, x_position: 0, is_visible: true, border_width: 0, background_color: null });
    t.match(button, { element_type: "button_save", button_label: "Save", button_action: "save", button_icon: "", button_background_color: "#0078d4", tab_order: 2 });
    t.notOk("colour" in button, "an unknown key is not stored");
    t.same(res.body.form_window.elements, (await api.get(`/api/form-windows/${window.id}`)).body.form_window.elements, "as stored");
  });
});
