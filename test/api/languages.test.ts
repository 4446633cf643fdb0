import t from "tap";
import { startTestApp } from "../support/app.ts";
import { buildUserWithToken } from "../support/factories.ts";
import { client, request } from "../support/http.ts";

t.test("languages", async (t) => {
  const app = await startTestApp(t);

  t.test("GET /languages lists en and de with names and completeness", async (t) => {
    const res = await request(app.url, "GET", "/api/languages");
    t.equal(res.status, 200);
    t.same(res.body.data.map((l: { code: string }) => l.code), ["en", "de"]);
    const de = res.body.data[1];
    t.equal(de.native_name, "Deutsch");
    t.equal(de.completeness, 1);
    t.equal(res.body.data[0].is_default, true);
  });

  t.test("POST /languages/detect: a text sample decides, else Accept-Language, else the default", async (t) => {
    const german = await request(app.url, "POST", "/api/languages/detect", { body: { text: "Die Bereitstellung ist fehlgeschlagen, weil das Passwort des Servers nicht stimmt." }, headers: { "accept-language": "en-US,en;q=0.9" } });
    t.equal(german.status, 200);
    t.equal(german.body.language, "de");
    t.equal(german.body.source, "text");
    const english = await request(app.url, "POST", "/api/languages/detect", { body: { text: "The deployment failed because the password of the server is wrong." } });
    t.equal(english.body.language, "en");
    const header = await request(app.url, "POST", "/api/languages/detect", { body: {}, headers: { "accept-language": "fr-CH, fr;q=0.9, de;q=0.8, en;q=0.7, *;q=0.5" } });
    t.same(header.body, { language: "de", source: "header", scores: [] }, "the first supported language by quality");
    const shortText = await request(app.url, "POST", "/api/languages/detect", { body: { text: "Hallo" }, headers: { "accept-language": "en" } });
    t.equal(shortText.body.source, "header", "too short a text does not decide");
    const none = await request(app.url, "POST", "/api/languages/detect", { body: {}, headers: { "accept-language": "q=;;,,*x" } });
    t.same(none.body, { language: "en", source: "default", scores: [] });
    t.equal((await request(app.url, "POST", "/api/languages/detect", { body: { text: 42 } })).status, 422);
  });

  t.test("error messages follow the user's language, else Accept-Language; codes never change", async (t) => {
    const german = await buildUserWithToken(app.pool, { language: "de" });
    const english = await buildUserWithToken(app.pool, { language: "en" });
    const missing = await client(app.url, german.token).get("/api/projects/987654");
    t.match(missing, { status: 404, body: { code: "not_found", message: "Die angeforderte Ressource wurde nicht gefunden." } });
    t.equal(missing.headers.get("content-language"), "de");
    const englishMissing = await request(app.url, "GET", "/api/projects/987654", { token: english.token, headers: { "accept-language": "de" } });
    t.match(englishMissing, { status: 404, body: { code: "not_found", message: "Project not found." } }, "the account's language wins over the header");
    t.equal(englishMissing.headers.get("content-language"), "en");
    const invalid = await client(app.url, german.token).post("/api/projects", { name: "" });
    t.equal(invalid.status, 422);
    t.equal(invalid.body.code, "validation_failed");
    t.equal(invalid.body.message, "Die übermittelten Daten sind ungültig.");
    t.ok(invalid.body.errors.name, "the field map is kept");
    const anonymous = await request(app.url, "GET", "/api/projects", { headers: { "accept-language": "fr-CH, de-AT;q=0.8" } });
    t.match(anonymous, { status: 401, body: { code: "unauthenticated", message: "Nicht angemeldet." } });
    t.match(await request(app.url, "GET", "/api/projects"), { status: 401, body: { code: "unauthenticated", message: "Unauthenticated." } });
  });

  t.test("the default language follows the global settings", async (t) => {
    const admin = await buildUserWithToken(app.pool, { roles: ["admin"] });
    t.equal((await client(app.url, admin.token).put("/api/admin/settings", { default_language: "de" })).status, 200);
    const res = await request(app.url, "POST", "/api/languages/detect", { body: {} });
    t.same(res.body, { language: "de", source: "default", scores: [] });
    t.equal((await request(app.url, "GET", "/api/languages")).body.data[1].is_default, true);
  });
});
