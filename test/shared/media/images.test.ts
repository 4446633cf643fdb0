/**
 * The image module: real images of each accepted format pass and come back re-encoded
 * without their metadata; SVG (with or without script), HTML, text, a PNG signature over
 * HTML, truncated data, oversize files and decompression bombs are refused with their code.
 */
import sharp from "sharp";
import t, { type Test } from "tap";
import { checkImage, defaultImageLimits, ImageRejected, sniffImage } from "../../../shared/media/images.ts";

const solid = (format: "png" | "jpeg" | "gif" | "webp" | "avif", width = 40, height = 30) =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 90 } } })
    .toFormat(format)
    .toBuffer();

const rejected = async (t: Test, input: Buffer, code: string, limits = defaultImageLimits) => {
  const error = await checkImage(input, limits).then(
    () => null,
    (e: unknown) => e,
  );
  t.ok(error instanceof ImageRejected, `refused (${code})`);
  t.equal((error as ImageRejected).code, code);
  return error as ImageRejected;
};

t.test("each accepted format passes, re-encoded, with its type and size", async (t) => {
  for (const format of ["png", "jpeg", "gif", "webp", "avif"] as const) {
    const image = await checkImage(await solid(format));
    t.equal(image.format, format);
    t.equal(image.contentType, `image/${format}`);
    t.same([image.width, image.height, image.frames], [40, 30, 1], `${format} dimensions`);
    t.match(image.sha256, /^[0-9a-f]{64}$/);
    const decoded = await sharp(image.data).metadata();
    t.equal(decoded.format === "heif" ? "avif" : decoded.format, format, `${format} stays ${format}`);
  }
});

t.test("metadata is dropped and the orientation applied", async (t) => {
  const input = await sharp({ create: { width: 60, height: 20, channels: 3, background: "white" } })
    .jpeg()
    .withMetadata({ orientation: 6 })
    .withExif({ IFD0: { Make: "SecretCam", Copyright: "GPS 48.85N 2.35E" } })
    .toBuffer();
  t.ok(input.includes("SecretCam"), "the upload carries EXIF");
  const image = await checkImage(input);
  t.notOk(image.data.includes("SecretCam"), "the stored image does not");
  t.same([image.width, image.height], [20, 60], "rotated as the orientation said");
  const decoded = await sharp(image.data).metadata();
  t.same([decoded.width, decoded.height, decoded.orientation ?? 1, decoded.exif], [20, 60, 1, undefined]);
});

t.test("bytes after the image (a polyglot) are gone", async (t) => {
  const png = await solid("png");
  const polyglot = Buffer.concat([png, Buffer.from("<html><script>alert(document.cookie)</script></html>")]);
  const image = await checkImage(polyglot);
  t.notOk(image.data.includes("<script>"));
});

t.test("SVG, HTML and text are refused", async (t) => {
  const svg = Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>');
  t.match((await rejected(t, svg, "image_svg")).message, /SVG images are not accepted/);
  await rejected(t, Buffer.from('\uFEFF  <!-- logo -->\n<svg viewBox="0 0 1 1"><rect width="1" height="1"/></svg>'), "image_svg");
  await rejected(t, Buffer.from("<!DOCTYPE html><html><body><script>alert(1)</script></body></html>"), "image_type");
  await rejected(t, Buffer.from("just some text, not an image\n"), "image_type");
  await rejected(t, Buffer.from([0x00, 0x01, 0x02, 0x03, 0x04]), "image_type");
  await rejected(t, Buffer.alloc(0), "image_empty");
});

t.test("a signature over something else, and truncated data, are refused", async (t) => {
  const fake = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from("<html><script>alert(1)</script>")]);
  await rejected(t, fake, "image_unreadable");
  const png = await solid("png", 200, 200);
  await rejected(t, png.subarray(0, Math.floor(png.length / 2)), "image_unreadable");
  const jpegInGifClothes = Buffer.concat([Buffer.from("GIF89a"), (await solid("jpeg")).subarray(6)]);
  t.equal(sniffImage(jpegInGifClothes), "gif");
  await rejected(t, jpegInGifClothes, "image_unreadable");
});

t.test("size and dimension limits", async (t) => {
  const png = await solid("png", 300, 200);
  t.match((await rejected(t, png, "image_too_large", { ...defaultImageLimits, maxBytes: png.length - 1 })).message, /images may be at most/);
  await rejected(t, png, "image_dimensions", { ...defaultImageLimits, maxSide: 250 });
  await rejected(t, png, "image_dimensions", { ...defaultImageLimits, maxPixels: 50_000 });
  // A decompression bomb: 8,000 × 8,000 of one colour is a small PNG and 64 megapixels.
  const bomb = await sharp({ create: { width: 8000, height: 8000, channels: 3, background: "black" }, limitInputPixels: false }).png({ compressionLevel: 9 }).toBuffer();
  t.ok(bomb.length < 1024 * 1024, `the bomb is ${bomb.length} bytes`);
  t.match((await rejected(t, bomb, "image_dimensions")).message, /8000×8000/);
});

t.test("animated GIFs keep their frames and count them against the pixel budget", async (t) => {
  const frames = await Promise.all([0, 1, 2].map((i) => sharp({ create: { width: 20, height: 20, channels: 3, background: { r: i * 80, g: 0, b: 0 } } }).raw().toBuffer()));
  const animated = await sharp(Buffer.concat(frames), { raw: { width: 20, height: 60, channels: 3, pageHeight: 20 } }).gif({ loop: 0 }).toBuffer();
  const image = await checkImage(animated);
  t.same([image.width, image.height, image.frames], [20, 20, 3]);
  await rejected(t, animated, "image_dimensions", { ...defaultImageLimits, maxPixels: 20 * 20 * 2 });
});
