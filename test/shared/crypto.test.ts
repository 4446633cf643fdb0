/**
 * The contracts of shared/crypto.ts that its callers rely on but no route can show: a sealed
 * value opens under its key only, with its version byte only and at any length (an empty
 * secret included); a signature is bound to its purpose and compares false, without
 * throwing, against text of any length; tokens are URL-safe.
 */
import { createHmac, randomBytes } from "node:crypto";
import t from "tap";
import { open, openText, randomToken, safeEqual, seal, sha256, sign, verifySignature } from "../../shared/crypto.ts";

const key = randomBytes(32);

t.test("seal and open: round trip, wrong key, tampering, version byte, empty secret", async (t) => {
  const sealed = seal(key, "the secret");
  t.equal(openText(key, sealed), "the secret");
  t.equal(sealed[0], 1, "version byte first");
  t.equal(sealed.length, 1 + 12 + 16 + "the secret".length, "version, IV, tag, ciphertext");
  t.not(seal(key, "the secret").subarray(1, 13).toString("hex"), sealed.subarray(1, 13).toString("hex"), "a fresh IV each time");
  t.throws(() => open(randomBytes(32), sealed), "another key cannot open it");
  const flipped = Buffer.from(sealed);
  flipped.writeUInt8(flipped.readUInt8(flipped.length - 1) ^ 1, flipped.length - 1);
  t.throws(() => open(key, flipped), "a changed ciphertext fails its tag");
  const otherVersion = Buffer.from(sealed);
  otherVersion[0] = 2;
  t.throws(() => open(key, otherVersion), new Error("Unknown sealed value format"), "a version this code does not know is refused, not guessed at");
  t.throws(() => open(key, sealed.subarray(0, 28)), new Error("Unknown sealed value format"), "shorter than version, IV and tag");
  const empty = seal(key, "");
  t.equal(empty.length, 29, "an empty secret is the header alone");
  t.equal(openText(key, empty), "", "and opens to the empty string");
  t.same(open(key, seal(key, Buffer.from([0, 255]))), Buffer.from([0, 255]), "bytes round-trip");
});

t.test("sign: HMAC under a key derived per purpose; verify compares without throwing", async (t) => {
  const derived = createHmac("sha256", key).update("schemaforge:links").digest();
  const expected = createHmac("sha256", derived).update("7:1700000000").digest("hex");
  t.equal(sign(key, "links", "7:1700000000"), expected, "the documented derivation");
  t.not(sign(key, "other", "7:1700000000"), expected, "a signature for one purpose is no signature for another");
  t.ok(verifySignature(key, "links", "7:1700000000", expected));
  t.notOk(verifySignature(key, "other", "7:1700000000", expected));
  t.notOk(verifySignature(key, "links", "7:1700000001", expected));
  t.notOk(verifySignature(randomBytes(32), "links", "7:1700000000", expected));
  for (const given of ["", "abc", `${expected}0`, expected.slice(1)]) {
    t.equal(verifySignature(key, "links", "7:1700000000", given), false, `length ${given.length}`);
  }
});

t.test("safeEqual: false for different lengths instead of throwing", async (t) => {
  t.equal(safeEqual(Buffer.from("abc"), Buffer.from("abc")), true);
  t.equal(safeEqual(Buffer.from("abc"), Buffer.from("abd")), false);
  t.equal(safeEqual(Buffer.from("abc"), Buffer.from("abcd")), false);
  t.equal(safeEqual(Buffer.alloc(0), Buffer.from("a")), false);
});

t.test("sha256 and randomToken", async (t) => {
  t.equal(sha256("abc").toString("hex"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const token = randomToken();
  t.match(token, /^[A-Za-z0-9_-]{43}$/, "32 bytes, base64url");
  t.match(randomToken(12), /^[A-Za-z0-9_-]{16}$/);
  t.not(randomToken(), token);
});
