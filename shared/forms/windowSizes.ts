/** Window sizes by type (spec, Limits): the default and the minimum, in pixels. */
export const windowTypes = ["main_menu", "create_edit", "data_table"] as const;
export type WindowType = (typeof windowTypes)[number];

export interface WindowSize {
  default_width: number;
  default_height: number;
  min_width: number;
  min_height: number;
}

export const windowSizes: Record<WindowType, WindowSize> = {
  main_menu: { default_width: 800, default_height: 600, min_width: 400, min_height: 300 },
  create_edit: { default_width: 600, default_height: 500, min_width: 300, min_height: 250 },
  data_table: { default_width: 900, default_height: 600, min_width: 500, min_height: 400 },
};
