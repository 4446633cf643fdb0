import { z } from "zod";

/** The text of a colour as the designer stores it: `#rgb`, `#rrggbb` or `#rrggbbaa`. */
export const hexColorPattern = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;

/** A colour as the designer stores it (`hexColorPattern`). */
export const hexColor = z.string().regex(hexColorPattern, { error: "Use a hex colour such as #1a2b3c." });

/** A new form set's colours when it names none. */
export const defaultSetColors = {
  default_background_color: "#f0f0f0",
  default_window_color: "#ffffff",
  default_text_color: "#000000",
  default_button_color: "#0078d4",
  default_button_text_color: "#ffffff",
} as const;
